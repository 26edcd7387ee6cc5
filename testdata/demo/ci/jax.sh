#!/bin/sh
# Demo list suite: four items.
. "$(dirname "$0")/_utils.sh"
setup_once
run_item test_fused_attn.auto        1.8
run_item test_custom_call_compute    1.5
run_item test_layer.auto             0.9
run_item test_softmax.auto           0.3
finish
