#!/bin/sh
# The shape of TransformerEngine's ci/jax.sh.
. "$(dirname "$0")/_utils.sh"

for _fa in auto ck unfused; do
    if check_level 3; then
        [ "$_fa" = ck ] && continue
    else
        [ "$_fa" = auto ] && continue
    fi
    pytest_run "$_fa" "" 1 test_custom_call_compute.py
    [ "$_fa" != unfused ] && pytest_run "$_fa" "" 1 test_fused_attn.py
    pytest_run "$_fa" "" 1 test_layer.py
    XLA_FLAGS=--xla_gpu_enable_command_buffer= pytest_run "$_fa" "" 1 test_softmax.py
done
pytest_run "" "" 1 test_helper.py
if [ -n "$TEST_MGPU" ]; then
    pytest_run "" "" 3 test_distributed_layernorm.py
fi
finish
