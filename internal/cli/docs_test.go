package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// foreignFlags are the flags the docs name of other tools: pytest, CTest, CMake,
// Docker, Python and TE's own scripts.
var foreignFlags = map[string]bool{
	"--build": true, "--build-arg": true, "--co": true, "--collect-only": true, "--continue-on-collection-errors": true, "--deselect": true,
	"--device": true, "--fixtures": true, "--format": true, "--group-add": true, "--junitxml": true,
	"--name": true, "--no-tests": true, "--opt": true, "--output-junit": true, "--output-on-failure": true,
	"--rm": true, "--rootdir": true, "--show-only": true, "--test-dir": true, "--timeout": true,
	"--use-fp8": true, "--use-te": true, "--version": true, "--help": true,
	// Docker's, pip's and git's, and TE's ci/change_scope.py's, in the TE migration.
	"--network": true, "--shm-size": true, "--no-build-isolation": true, "--name-status": true, "--no-renames": true,
	"--github-output": true, "--summary": true, "--all": true,
	// Docker's --env-file and --ulimit, TE's ci/junit_report.py's --title.
	"--env-file": true, "--ulimit": true, "--title": true,
}

// commandFlags are each command's flags, read from its --help.
func commandFlags(t *testing.T) map[string]map[string]bool {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	out := map[string]map[string]bool{}
	for _, cmd := range []string{"run", "verify", "plan", "merge", "simulate", "report"} {
		var b bytes.Buffer
		Main(Env{Args: []string{cmd, "--help"}, Stdout: &b, Stderr: &b, Getenv: func(string) string { return "" }})
		out[cmd] = map[string]bool{}
		for _, m := range flagLine.FindAllStringSubmatch(b.String(), -1) {
			out[cmd]["--"+m[1]] = true
		}
		if len(out[cmd]) == 0 && cmd != "report" {
			t.Fatalf("%s --help lists no flag:\n%s", cmd, b.String())
		}
	}
	return out
}

var (
	docFlag = regexp.MustCompile("(?:^|[\\s`(\\[=\"'])(--[a-z][a-z0-9-]*[a-z0-9])")
	// invocation is a command line of this tool in the docs, up to where a shell or
	// the prose ends it.
	invocation = regexp.MustCompile("(?:sgpu-queue|go run \\.|/tmp/sgpu) (run|verify|plan|merge|simulate|report)\\b([^`|;&)]*)")
)

// Every --flag README.md and docs/*.md name is a flag of some command (or a named
// flag of another tool), and every flag on a written command line of this tool
// (`sgpu-queue plan --shards 3 …`) is that command's.
func TestDocsNameRealFlags(t *testing.T) {
	flags := commandFlags(t)
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	lines := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(page)
		for i, l := range strings.Split(string(data), "\n") {
			for _, m := range docFlag.FindAllStringSubmatch(l, -1) {
				f := m[1]
				known := foreignFlags[f]
				for _, fs := range flags {
					known = known || fs[f]
				}
				if !known {
					t.Errorf("%s:%d names %s, which no command has", name, i+1, f)
				}
			}
			for _, m := range invocation.FindAllStringSubmatch(l, -1) {
				lines++
				for _, fm := range docFlag.FindAllStringSubmatch(m[2], -1) {
					if f := fm[1]; f != "--help" && !flags[m[1]][f] {
						t.Errorf("%s:%d: %s %s: %s has no such flag", name, i+1, m[1], f, m[1])
					}
				}
			}
		}
	}
	if lines < 20 {
		t.Errorf("only %d command lines found in the docs: is the pattern reading them?", lines)
	}
}
