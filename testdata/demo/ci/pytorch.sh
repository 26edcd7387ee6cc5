#!/bin/sh
# Demo list suite: ten items of uneven size, one only at level 3, one gated on a
# capability this pretend GPU lacks (listed by the census, not queued).
. "$(dirname "$0")/_utils.sh"
setup_once
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
finish
