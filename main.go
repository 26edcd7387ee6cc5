// Command sgpu-queue runs a project's GPU test suites as one longest-first work
// queue: each item starts the moment a GPU (or, for a multi-GPU item, enough GPUs)
// is free. See docs/cli.md and docs/action.md.
package main

import (
	"os"

	"github.com/rocm/sgpu-queue/internal/cli"
)

// version is set at build time (-ldflags "-X main.version=v1.2.3").
var version string

func main() {
	os.Exit(cli.Main(cli.Env{
		Args:    os.Args[1:],
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Environ: os.Environ(),
		Version: version,
	}))
}
