#!/bin/sh
# Demo list suite: ten single-GPU items of uneven size, one only at level 3, one gated
# on a capability this pretend GPU lacks (listed by the census, not queued); and,
# with TEST_MGPU, four multi-GPU items (one only at level 3).
. "$(dirname "$0")/_utils.sh"
setup_once
if [ -n "$TEST_SGPU" ]; then
    run_item test_numerics.ck           1.6
    run_item test_numerics.ck.amax      1.2
    run_item triton_kernels.test_norms  2.4
    run_item test_sanity.ck             0.8
    run_item test_sanity.flash          0.7
    run_item test_fused_rope.ck         0.5
    run_item test_cuda_graphs.ck        0.6
    run_item test_jit.ck                0.3
    run_item test_numerics.ck.exhaustive 3.0 3
    if check_supported fp4; then
        run_item nvfp4..ck              0.4
    fi
fi
# The distributed tests, as TE's TEST_MGPU section runs them (torch-mgpu in
# mgpu.conf): each takes the GPUs its suite gives it.
if [ -n "$TEST_MGPU" ]; then
    run_item distributed.test_numerics   1.0
    run_item distributed.test_fusible_ops 0.8
    run_item distributed.test_torch_fsdp2 0.6 3
    run_item test_fused_optimizer        0.4
fi
finish
