#!/bin/sh
# Demo opaque suite: one item, runs end to end with its own setup.
echo "core: building and running the C++ tests (pretend)"
sleep 1.4
echo "core: 128 tests passed"
