//go:build sgpu_testhooks

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// testHooks injects the faults the end-to-end tests ask for, in a binary built with
// -tags sgpu_testhooks only (a release build has testhooks_off.go):
//
//	SGPU_TEST_PANIC_FILTER=<tag>  the dispatch worker that ran the item whose filter is
//	                              <tag> panics after the item ended, before it is recorded
//	SGPU_TEST_HOLD_SAVE=<path>    phase 6 holds before saving the weight table until
//	                              <path> exists (a signal sent "during phase 6–7")
func testHooks(e Env, o *engine.Options) {
	if hold := e.Getenv("SGPU_TEST_HOLD_SAVE"); hold != "" {
		o.Weights.Store = func(_, _, path string) weights.Store { return holdSave{File: weights.File{Path: path}, until: hold} }
	}
	tag := e.Getenv("SGPU_TEST_PANIC_FILTER")
	if tag == "" {
		return
	}
	inner := o.Target.Exec
	if inner == nil {
		inner = executor.Local{Grace: o.Target.Grace, Force: o.Target.Force}
	}
	filter := o.Target.Hooks.Filter
	if filter == "" {
		filter = hook.Default().Filter
	}
	o.Target.Exec = panicAfter{inner: inner, env: filter + "=" + tag}
}

// panicAfter panics after the command whose environment holds env.
type panicAfter struct {
	inner executor.Executor
	env   string
}

func (p panicAfter) Run(ctx context.Context, c executor.Command) (executor.Result, error) {
	res, err := p.inner.Run(ctx, c)
	for _, kv := range c.Env {
		if kv == p.env {
			panic(fmt.Sprintf("test hook: injected worker fault after the item of %s", p.env))
		}
	}
	return res, err
}

// holdSave is the local weight table, whose Save waits (two minutes at most) until
// the file until exists.
type holdSave struct {
	weights.File
	until string
}

func (h holdSave) Save(ctx context.Context, t *weights.Table) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(h.until); err == nil {
			return h.File.Save(ctx, t)
		}
	}
	return errors.New("test hook: " + h.until + " never appeared")
}
