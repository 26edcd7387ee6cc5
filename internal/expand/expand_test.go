package expand

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
)

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunBothPasses(t *testing.T) {
	dir := t.TempDir()
	// Lists "b" only when probes are skipped (the census), like a capability gate.
	list := script(t, dir, "list.sh", `
[ -n "$TE_CI_LIST_ITEMS" ] || exit 9
[ "$TEST_SGPU" = 1 ] && [ -z "$TEST_MGPU" ] && [ "${TEST_MGPU+set}" = set ] || exit 8
echo "probe noise" >&2
echo "TE_CI_ITEM a"
[ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && echo "TE_CI_ITEM b"
echo "TE_CI_ITEM lvl$TEST_LEVEL"
echo "TE_CI_ITEM g*"
`)
	badCensus := script(t, dir, "bc.sh", `echo "TE_CI_ITEM x"; [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && exit 3; exit 0`)
	suites := []config.Suite{
		{Label: "core", Mode: config.Opaque, Path: "/nonexistent"},
		{Label: "torch", Mode: config.List, Path: list},
		{Label: "jax", Mode: config.List, Path: badCensus},
	}
	var log bytes.Buffer
	res, err := Run(context.Background(), Request{
		Suites: suites, Log: &log,
		Target: runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), Env: os.Environ(), Level: "2", RepoRoot: dir},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, it.Key())
	}
	if strings.Join(got, " ") != "core torch/a torch/lvl2 torch/g* jax/x" {
		t.Errorf("queue %v", got)
	}
	for i, it := range res.Items {
		if it.Seq != i {
			t.Errorf("seq %d = %d", i, it.Seq)
		}
	}
	if c := res.Census["torch"]; len(c) != 4 || !c["torch/b"] {
		t.Errorf("torch census %v", c)
	}
	if c, ok := res.Census["jax"]; !ok || c != nil {
		t.Errorf("failed census should be nil, got %v", c)
	}
	// An opaque suite's census is its bare label, so phase 6 prunes the per-tag
	// keys it had as a list suite; items.tsv gets TE's "core<TAB>" row for it.
	if c := res.Census["core"]; len(c) != 1 || !c["core"] {
		t.Errorf("opaque census %v, want {core}", c)
	}
	if len(res.Rows) == 0 || res.Rows[0] != (record.ItemID{Label: "core"}) {
		t.Errorf("census rows %+v, want core's first", res.Rows)
	}
	// A tag with glob characters is no reason for a warning: it is dispatched as a
	// filter that selects only itself.
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `suite "jax" census`) {
		t.Errorf("warnings %q", res.Warnings)
	}
	if !strings.Contains(log.String(), "probe noise") {
		t.Errorf("stderr not in expand.log: %q", log.String())
	}
}

// A census that lacks a tag the queue pass listed cannot be "everything that exists"
// (a script whose census gate is wrong): pruning against it would drop the weight of
// an item that still runs, so the suite prunes nothing and writes no items.tsv rows.
func TestRunCensusMustCoverTheQueue(t *testing.T) {
	dir := t.TempDir()
	list := script(t, dir, "list.sh", `
echo "TE_CI_ITEM a"
if [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ]; then echo "TE_CI_ITEM c"; else echo "TE_CI_ITEM b"; fi
`)
	res, err := Run(context.Background(), Request{
		Suites: []config.Suite{{Label: "torch", Mode: config.List, Path: list}},
		Target: target(dir),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := res.Census["torch"]; !ok || c != nil {
		t.Errorf("census %v, want nil (untrusted)", c)
	}
	if len(res.Rows) != 0 {
		t.Errorf("items.tsv rows %+v, want none", res.Rows)
	}
	want := `suite "torch" census lacks b that the queue pass listed (it must list everything that exists); its weights are not pruned this run`
	if len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("warnings %q\nwant %q", res.Warnings, want)
	}
}

// One script as a single- and a multi-GPU suite (TE's torch and torch-mgpu): each
// is listed, census included, with its own switch, and each item takes its line's
// GPU count, else its suite's.
func TestRunMultiGPUSuites(t *testing.T) {
	dir := t.TempDir()
	p := script(t, dir, "pytorch.sh", `
[ -n "$TE_CI_LIST_ITEMS" ] || exit 9
if [ "$TEST_SGPU" = 1 ] && [ -z "$TEST_MGPU" ]; then
    echo "TE_CI_ITEM test_numerics"
elif [ -z "$TEST_SGPU" ] && [ "${TEST_SGPU+set}" = set ] && [ "$TEST_MGPU" = 1 ]; then
    echo "TE_CI_ITEM distributed.test_numerics"
    echo "TE_CI_ITEM distributed.test_big gpus=all"
    echo "TE_CI_ITEM distributed.test_pair gpus=2"
    [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && echo "TE_CI_ITEM distributed.gated gpus=4"
else
    exit 8
fi
exit 0
`)
	o := script(t, dir, "core.sh", "exit 0\n")
	suites := []config.Suite{
		{Label: "torch", Mode: config.List, Path: p},
		{Label: "torch-mgpu", Mode: config.List, Path: p, Options: config.Options{GPUs: 4}},
		{Label: "core-mgpu", Mode: config.Opaque, Path: o, Options: config.Options{AllGPUs: true}},
	}
	res, err := Run(context.Background(), Request{
		Suites: suites, Target: target(dir),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, fmt.Sprintf("%s:%d:%v", it.Key(), it.GPUs, it.AllGPUs))
	}
	want := "torch/test_numerics:0:false torch-mgpu/distributed.test_numerics:4:false torch-mgpu/distributed.test_big:0:true " +
		"torch-mgpu/distributed.test_pair:2:false core-mgpu:0:true"
	if strings.Join(got, " ") != want {
		t.Errorf("queue %s\nwant  %s", strings.Join(got, " "), want)
	}
	if c := res.Census["torch-mgpu"]; len(c) != 4 || !c["torch-mgpu/distributed.gated"] || c["torch-mgpu/test_numerics"] {
		t.Errorf("torch-mgpu census %v", c)
	}
	if c := res.Census["torch"]; len(c) != 1 || !c["torch/test_numerics"] {
		t.Errorf("torch census %v", c)
	}
}

func TestRunFailures(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body, want string
		timeout          time.Duration
	}{
		{"listing fails", `echo "ImportError: no module named torch" >&2; exit 4`, `suite "s": its queue listing (TE_CI_LIST_ITEMS=1) exited with 4`, 0},
		{"listing empty", `echo "nothing here"`, `suite "s": its listing (TE_CI_LIST_ITEMS=1) printed no "TE_CI_ITEM <tag>" line`, 0},
		{"listing hangs", `echo "probing fp8" >&2; sleep 30`, `suite "s": its queue listing (TE_CI_LIST_ITEMS=1) did not end within 300ms (list-timeout) and was stopped`, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := script(t, dir, "s.sh", tt.body)
			_, err := Run(context.Background(), Request{
				Suites:  []config.Suite{{Label: "s", Mode: config.List, Path: p, File: "c.conf", Line: 2}},
				Target:  runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), Level: "1", RepoRoot: dir},
				Timeout: tt.timeout,
			})
			var ee *Error
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "c.conf:2:") {
				t.Fatalf("err = %v", err)
			}
			if ee.TimedOut != (tt.timeout > 0) {
				t.Errorf("TimedOut = %v", ee.TimedOut)
			}
			if tt.name == "listing fails" && !strings.Contains(err.Error(), "| ImportError") ||
				tt.name == "listing hangs" && !strings.Contains(err.Error(), "| probing fp8") {
				t.Errorf("tail of the output missing: %v", err)
			}
		})
	}
}

// TE's current listing, "TE_CI_ITEM <tag> <N>": the bare count is the item's width;
// a width that is no GPU count stops the suite, naming the item and the word.
func TestRunBareCounts(t *testing.T) {
	dir := t.TempDir()
	good := script(t, dir, "good.sh", `echo "TE_CI_ITEM distributed.test_numerics 4"; echo "TE_CI_ITEM test_sanity"`)
	for _, c := range []struct {
		word, want string
	}{
		{"0", `item dist.x: its listing line (TE_CI_ITEM dist.x …) gives the width "0"`},
		{"-1", `gives the width "-1"`},
		{"gpus=02", `gives the width "gpus=02"`},
	} {
		bad := script(t, dir, "bad.sh", `echo "TE_CI_ITEM fine 2"; echo "TE_CI_ITEM dist.x `+c.word+`"`)
		suites := []config.Suite{{Label: "ok", Mode: config.List, Path: good}, {Label: "mg", Mode: config.List, Path: bad, File: "m.conf", Line: 3}}
		_, err := Run(context.Background(), Request{Suites: suites, Target: target(dir)})
		var e *Error
		if !errors.As(err, &e) || e.Suite.Label != "mg" || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), `m.conf:3: suite "mg": `) {
			t.Errorf("width %s: err %v, want an *Error of suite mg saying %q", c.word, err, c.want)
		}
	}
	res, err := Run(context.Background(), Request{Suites: []config.Suite{{Label: "ok", Mode: config.List, Path: good, Options: config.Options{GPUs: 2}}},
		Target: target(dir)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, fmt.Sprintf("%s:%d", it.Key(), it.Width()))
	}
	if strings.Join(got, " ") != "ok/distributed.test_numerics:4 ok/test_sanity:2" {
		t.Errorf("items %v, want the line's 4 and the suite's 2", got)
	}
}

// target runs the listings here, from dir, at level 1.
func target(dir string) runenv.Target {
	return runenv.Target{Exec: executor.Local{}, Hooks: hook.Default(), Env: os.Environ(), Level: "1", RepoRoot: dir}
}
