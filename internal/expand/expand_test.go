package expand

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
)

func TestParseListing(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		tags  []string
		warns int
	}{
		{"te output", "setup skipped\nTE_CI_ITEM test_numerics.ck.amax+triton\nTE_CI_ITEM mxfp4..ck\n", []string{"test_numerics.ck.amax+triton", "mxfp4..ck"}, 0},
		{"crlf and spaces", "TE_CI_ITEM  a \r\nTE_CI_ITEM\tb\n", []string{"a", "b"}, 0},
		{"hostile tags kept", "TE_CI_ITEM ../../x\nTE_CI_ITEM a b/c\nTE_CI_ITEM t\x01x\n", []string{"../../x", "a b/c", "t\x01x"}, 0},
		{"duplicates run once", "TE_CI_ITEM a\nTE_CI_ITEM b\nTE_CI_ITEM a\n", []string{"a", "b"}, 1},
		{"empty tag", "TE_CI_ITEM\nTE_CI_ITEM   \n", nil, 2},
		{"other words", "TE_CI_ITEMS a\n  TE_CI_ITEM b\nxTE_CI_ITEM c\n", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tags, warns := ParseListing([]byte(tt.in), "TE_CI_ITEM")
			if strings.Join(tags, "|") != strings.Join(tt.tags, "|") || len(warns) != tt.warns {
				t.Errorf("tags %q warns %q", tags, warns)
			}
		})
	}
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte("TE_CI_ITEM a\nTE_CI_ITEM b c\n"))
	f.Add([]byte("TE_CI_ITEM \x00\r\nTE_CI_ITEM a\nTE_CI_ITEM a\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		tags, _ := ParseListing(in, "TE_CI_ITEM")
		seen := map[string]bool{}
		for _, tag := range tags {
			if tag == "" || seen[tag] || strings.ContainsAny(tag, "\n") || tag != strings.TrimSpace(tag) {
				t.Fatalf("bad tag %q in %q", tag, tags)
			}
			seen[tag] = true
		}
	})
}

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
		Suites: suites, Exec: executor.Local{}, Hooks: hook.Default(), Env: os.Environ(), Level: "2", Dir: dir, Log: &log,
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
	if _, ok := res.Census["core"]; ok {
		t.Error("opaque suite has a census")
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
				Suites: []config.Suite{{Label: "s", Mode: config.List, Path: p, File: "c.conf", Line: 2}},
				Exec:   executor.Local{}, Hooks: hook.Default(), Level: "1", Dir: dir, Timeout: tt.timeout,
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
