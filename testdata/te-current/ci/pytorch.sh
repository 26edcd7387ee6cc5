#!/bin/bash
# Fixture in the shape of TE's ci/pytorch.sh: single-GPU call sites under TEST_SGPU,
# multi-GPU ones under TEST_MGPU, widths declared with TE_CI_GPUS=N or not at all
# (the whole box).
DIR=$(dirname "$0")
. "$DIR/_utils.sh"
setup_once
if [ -n "$TEST_SGPU" ]; then
    pytest_run test_numerics.py ck
    pytest_run test_numerics.py ck.amax
    pytest_run test_sanity.py ck
    pytest_run triton_kernels/test_norms.py
    pytest_run test_fused_rope.py
    pytest_run test_jit.py
fi
if [ -n "$TEST_MGPU" ]; then
    TE_CI_GPUS=4 pytest_run distributed/test_numerics.py ck
    TE_CI_GPUS=4 pytest_run attention/test_attention_with_cp.py ck
    TE_CI_GPUS=2 pytest_run distributed/test_sanity.py ck
    TE_CI_GPUS=8 pytest_run distributed/test_fusible_ops.py ck
    pytest_run distributed/test_torch_fsdp2.py ck
fi
return_run_results
