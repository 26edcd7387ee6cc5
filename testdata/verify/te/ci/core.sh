#!/bin/sh
echo "core: C++ tests (pretend)"
