#!/bin/bash
# A list suite for the worker-panic test: on two GPUs p.long runs while p.short and
# then p.boom (the item after which the test hook panics) run beside it.
SUITE=pi
. "$(dirname "$0")/lib.sh"
setup
item p.long  20
item p.short 0.2
item p.boom  0.2
item p.never 0.1
done_suite
