#!/bin/sh
# Demo list suite: four single-GPU items; with TEST_MGPU, two multi-GPU ones.
. "$(dirname "$0")/_utils.sh"
setup_once
if [ -n "$TEST_SGPU" ]; then
    run_item test_fused_attn.auto        1.8
    run_item test_custom_call_compute    1.5
    run_item test_layer.auto             0.9
    run_item test_softmax.auto           0.3
fi
# The distributed tests (jax-mgpu in mgpu.conf).
if [ -n "$TEST_MGPU" ]; then
    run_item test_distributed_layernorm  0.7
    run_item test_multigpu_encoder       0.9
fi
finish
