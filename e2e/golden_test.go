package e2e

import "flag"

// update rewrites the golden files the end-to-end tests compare with (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/")
