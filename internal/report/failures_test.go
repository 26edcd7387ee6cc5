package report

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/tests"
)

// TestFailuresFirst: a reviewer reads the verdict with its level, then what failed
// (suites, items, each failed test case by name with its message), and only then
// how the run went; in both renderings.
func TestFailuresFirst(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "runs", "te80-failures"), dir)
	r, suites, s := loadRun(t, dir)
	for name, o := range map[string]Options{"schedule.md": {}, "github": {RunURL: runURL}} {
		t.Run(name, func(t *testing.T) {
			md := Render(r, suites, s, o)
			order := []string{
				"## ✗ sgpu-queue: 8 of 9 tests failed; 5 of 83 items failed at level 3\n",
				"**9 tests**: 1 passed · **7 failed** · **1 errored** · 0 skipped",
				"| `torch` ✗ | 8 | 1 | 7 | 0 | 0 | 71 | 4 |",
				"**wall 46m18s** · 83 items",
				"### Failed tests (8)",
				"| `tests.pytorch.test_numerics::test_linear[case0]` | failed | `torch/test_numerics.flash` | – | AssertionError\\: Tensor\\-likes are not close\\! |",
				"| `tests.jax.test_layer::test_layer_fwd[bf16]` | errored | `jax/test_layer.auto` |",
				"### Failed suites (2)",
				"| `torch` | `list` | 139 | 4 of 71 items failed |",
				"### Failed items (5)",
				"#### ✗ `jax/test_layer.auto`: rc 124, 382s on GPU 1",
				"**`tests.jax.test_layer::test_layer_fwd[bf16]`** (error)",
				"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: hipMemcpy failed",
				"#### ✗ `torch/mxfp4..ck`: rc 139, cut off",
				"Its JUnit records no failed test case: see its log.",
				"#### ✗ `torch/test_numerics.flash`: rc 1",
				"7 failed test case(s) in its JUnit",
				"**`tests.pytorch.test_numerics::test_linear[case0]`** (failure)",
				"AssertionError: Tensor-likes are not close!\nMismatched elements: 3 / 4096 (0.1%)\n",
				"**`tests.pytorch.test_numerics::test_linear[case4]`**",
				"*and 2 more failed test case(s): `junit/torch.xml`.*",
				"### Efficiency",
				"### Timeline",
				"### Suites",
				"### GPUs",
			}
			at := 0
			for _, w := range order {
				i := strings.Index(md[at:], w)
				if i < 0 {
					t.Fatalf("%q missing, or not after %q:\n%s", w, md[max(0, at-200):at], md)
				}
				at += i + len(w)
			}
			for _, not := range []string{"**`tests.pytorch.test_numerics::test_linear[case5]`**", "Greatest relative difference", "E   long traceback"} {
				if strings.Contains(md, not) {
					t.Errorf("the report shows %q: more than the bounds allow", not)
				}
			}
			checkMarkdown(t, []byte(md))
		})
	}

	passed, psuites, ps := loadRun(t, filepath.Join("testdata", "runs", "te80"))
	md := Render(passed, psuites, ps, Options{})
	if !strings.HasPrefix(md, "## ✓ sgpu-queue: all 80 items passed at level 3\n") || strings.Contains(md, "### Failed") {
		t.Errorf("a green run: want the verdict at level 3 and no failure section:\n%.300s", md)
	}
}

// TestNoAbsolutePath: the weight table, messages and log tails name no runner's or
// container's absolute path; an absolute table path outside the roots is shown by
// its file name.
func TestNoAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "runs", "te80-failures"), dir)
	r, suites, s := loadRun(t, dir)
	for i, w := range []string{"/__w/TransformerEngine/TransformerEngine/ci-weights/test_weights.gfx950.l3.txt", "/opt/tables/t.txt"} {
		r.Meta.Weights = w
		// The roots as run.json records them, or as the caller adds them.
		o := Options{RunURL: runURL}
		r.Meta.Roots = []string{"/__w/TransformerEngine/TransformerEngine"}
		if i == 1 {
			o.Roots, r.Meta.Roots = r.Meta.Roots, nil
		}
		md := Render(r, suites, s, o)
		if i := strings.Index(md, "/__w/"); i >= 0 {
			t.Errorf("weights %s: the report names %q", w, md[i:min(len(md), i+80)])
		}
		if strings.Contains(md, "/opt/") || !strings.Contains(md, "Table: `"+filepath.Base(w)+"`") {
			t.Errorf("weights %s: the table line is not its file name", w)
		}
	}
}

func TestMessage(t *testing.T) {
	root := Options{Roots: []string{"/repo"}}
	cases := []struct {
		name string
		c    tests.Test
		want string
	}{
		{"first lines of the message", tests.Test{Case: junit.Case{Message: "a\n\nb\nc\nd", Body: "x"}}, "a\nb\nc\n…"},
		{"no message: the body's end", tests.Test{Case: junit.Case{Body: "1\n2\n3\n4\n"}}, "…\n2\n3\n4"},
		{"roots made relative", tests.Test{Case: junit.Case{Message: "see /repo/t/x.py:3 and /repository/y"}}, "see t/x.py:3 and /repository/y"},
		{"long line cut by runes", tests.Test{Case: junit.Case{Message: strings.Repeat("é", 300)}}, strings.Repeat("é", messageRunes-1) + "…"},
		{"nothing", tests.Test{}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := message(tt.c, root); got != tt.want {
				t.Errorf("message = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCasesFromHostileRunJSON: run.json may come from a fork's artifact (report-from):
// a junit entry naming a FIFO, a link or a file that is not .xml is not read (a
// FIFO would block the report forever), and the report still renders.
func TestCasesFromHostileRunJSON(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "runs", "te80-failures"), dir)
	r, suites, _ := loadRun(t, dir)
	fifo := filepath.Join(dir, "junit", "fifo.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "junit", "torch.xml"), filepath.Join(dir, "junit", "link.xml")); err != nil {
		t.Fatal(err)
	}
	r.Meta.JUnit = []string{"junit/fifo.xml", "junit/link.xml", "queue/run.json", "../../../../../../dev/zero"}
	md := Render(r, suites, Compute(r, suites), Options{})
	if strings.Contains(md, "failed test case(s) in its JUnit") {
		t.Errorf("cases were read from a file that is not a regular .xml file")
	}
	if !strings.Contains(md, "### Failed items (5)") {
		t.Errorf("the report lost its failed items")
	}
}
