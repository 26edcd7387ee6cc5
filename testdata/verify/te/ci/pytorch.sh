#!/bin/sh
# The shape of TransformerEngine's ci/pytorch.sh: a backend matrix gated by level,
# call lines with env prefixes and -k expressions, tags with + and .. in them.
. "$(dirname "$0")/_utils.sh"

run_config() {
    pytest_run "$_fa" "" 1 test_numerics.py
    NVTE_AMAX_TRITON=1 pytest_run "$_fa" "amax+triton" 1 test_numerics.py -k amax
    pytest_run "$_fa" "amax" 3 test_numerics.py -k "amax and not triton"
    pytest_run "$_fa" "" 1 test_sanity.py
    pytest_run "$_fa" "" 1 test_fused_rope.py
    pytest_run "$_fa" "" 3 test_cuda_graphs.py
    pytest_run "$_fa" "" 1 fused_attn/test_fused_attn.py
    pytest_run "" "$_fa" 1 triton_kernels/test_norms.py
    if check_supported mxfp8; then
        pytest_run "" "$_fa" 1 mxfp4/
        pytest_run "$_fa" "" 3 test_mxfp8.py
    fi
    if check_supported flash_attn; then
        pytest_run "$_fa" "flash" 1 fused_attn/test_fused_attn.py -k flash
    fi
}

for _fa in auto ck aotriton unfused; do
    # Level 1 runs ck, aotriton and unfused; level 3 auto, aotriton and unfused.
    if check_level 3; then
        [ "$_fa" = ck ] && continue
    else
        [ "$_fa" = auto ] && continue
    fi
    run_config
done
pytest_run "" "" 1 test_jit.py
if [ -n "$TEST_MGPU" ]; then
    pytest_run "" "" 3 distributed/test_numerics.py
fi
finish
