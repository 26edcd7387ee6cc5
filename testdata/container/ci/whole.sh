#!/bin/sh
# An opaque suite that runs inside the fixture container.
echo "whole suite in $(hostname)"
sleep 0.4
