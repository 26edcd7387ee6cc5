//go:build !sgpu_testhooks

package cli

import "github.com/rocm/sgpu-queue/internal/engine"

// testHooks does nothing in a release build. The end-to-end tests build the binary
// with -tags sgpu_testhooks (testhooks_on.go), which injects faults that no real
// suite can cause, such as a panic in a dispatch worker.
func testHooks(Env, *engine.Options) {}
