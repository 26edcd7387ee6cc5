//go:build !sgpu_testhooks

package cli

import "github.com/rocm/sgpu-queue/internal/engine"

// testHooks does nothing in a release build; the e2e tests build with -tags
// sgpu_testhooks to inject faults no real suite can cause (testhooks_on.go).
func testHooks(Env, *engine.Options) {}
