#!/bin/sh
# Demo opaque suite.
echo "examples: running the examples (pretend)"
sleep 0.6
