#!/bin/bash
# Fixture in the shape of TE's ci/jax.sh (see pytorch.sh).
DIR=$(dirname "$0")
. "$DIR/_utils.sh"
setup_once
if [ -n "$TEST_SGPU" ]; then
    pytest_run test_custom_call_compute.py auto
    pytest_run test_fused_attn.py aotriton
    pytest_run test_layer.py auto
fi
if [ -n "$TEST_MGPU" ]; then
    TE_CI_GPUS=4 pytest_run test_distributed_layernorm.py auto
    TE_CI_GPUS=2 pytest_run test_sanity_import.py auto.mgpu
    pytest_run test_distributed_fused_attn.py auto
fi
return_run_results
