package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/mdcheck"
)

const runURL = "https://github.com/ROCm/TransformerEngine/actions/runs/4242"

// For github.com the report has no relative link, names logs instead, shows each
// failed item's log tail inline (bounded, hostile content fenced), and points at the
// run's artifacts; report/schedule.md keeps its relative links.
func TestGitHubReport(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "runs", "te80-failures"), dir)
	r, suites, s := loadRun(t, dir)
	failed := failedItems(suites)
	if len(failed) < 2 {
		t.Fatalf("fixture has %d failed items", len(failed))
	}
	// The first failed item's log: long, coloured, with what could break out of a
	// fence or a <details>.
	var log strings.Builder
	for i := 0; i < 500; i++ {
		log.WriteString("\x1b[32mPASSED\x1b[0m filler line\n")
	}
	log.WriteString("```\n</details>\n<script>alert(1)</script>\n[x](../../etc/passwd)\x07\nE   AssertionError: last words\n")
	p := filepath.Join(dir, filepath.FromSlash(failed[0].LogRel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(log.String()), 0o644)

	roots := []string{"/__w/TransformerEngine/TransformerEngine/"}
	md := Render(r, suites, s, Options{RunURL: runURL, Roots: roots})
	checkMarkdown(t, []byte(md))
	if bad := mdcheck.RelativeLinks(md); len(bad) > 0 {
		t.Errorf("relative links in the GitHub report: %q", bad)
	}
	for _, want := range []string{
		"E   AssertionError: last words",
		"[the run's artifacts](" + runURL + ")",
		"#### ✗ " + code(failed[0].Key()) + ": rc ",
		"<summary>Last 30 lines of <code>" + xmlText(failed[0].LogRel, maxShown) + "</code></summary>",
		"(the log is empty or missing)", // the second failed item has no log file
		// Its JUnit, relative to the repo root.
		"RuntimeError: see tests/pytorch/test_numerics.py:412",
		`File "tests/jax/test_layer.py", line 88`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("GitHub report lacks %q", want)
		}
	}
	if strings.Count(md, "filler line") > tailLines {
		t.Errorf("the tail is not bounded: %d filler lines", strings.Count(md, "filler line"))
	}
	if strings.Contains(md, "\x1b") || strings.Contains(md, "\x07") {
		t.Error("terminal escapes or control characters reached the report")
	}
	// The hostile lines are inside a fence longer than the log's own backtick run.
	i := strings.Index(md, "</details>\n<script>")
	open := strings.LastIndex(md[:i], "````text\n")
	if i < 0 || open < 0 || strings.Contains(md[open:i], "\n````\n") {
		t.Errorf("the log's markup is not fenced:\n%s", md[max(0, i-300):min(len(md), i+100)])
	}

	if strings.Contains(md, "/__w/") {
		t.Errorf("the report names the runner's absolute path:\n%s", md[strings.Index(md, "/__w/")-200:][:400])
	}

	local := Render(r, suites, s, Options{})
	if got := mdcheck.RelativeLinks(local); len(got) == 0 || strings.Contains(local, "<summary>Last ") {
		t.Errorf("schedule.md lost its relative links (%d) or gained tails", len(got))
	}
	goldenFile(t, "te80-failures.github.md", []byte(Render(r, suites, s, Options{RunURL: runURL, Roots: roots})))
}

// The golden GitHub rendering of the fixture runs (no logs there: each tail says so).
func TestGitHubGolden(t *testing.T) {
	for _, name := range []string{"hostile", "te80-cancelled"} {
		t.Run(name, func(t *testing.T) {
			r, suites, s := loadRun(t, filepath.Join("testdata", "runs", name))
			md := Render(r, suites, s, Options{RunURL: runURL})
			checkMarkdown(t, []byte(md))
			if bad := mdcheck.RelativeLinks(md); len(bad) > 0 {
				t.Errorf("relative links: %q", bad)
			}
			goldenFile(t, name+".github.md", []byte(md))
		})
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
