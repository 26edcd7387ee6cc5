package cli

import "flag"

// update rewrites the golden files under testdata/ (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")
