// Package adaptertest finds the real tools the adapter tests run (docs/adapters.md);
// a test that finds none skips loudly, naming what to install.
package adaptertest

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

var (
	pythonOnce sync.Once
	pythonPath string
	pythonWhy  string
)

// Python is an interpreter that can import pytest: python3 on PATH (a pyenv shim may
// lack it) or Debian's /usr/bin/python3 (python3-pytest).
func Python(t testing.TB) string {
	t.Helper()
	pythonOnce.Do(func() {
		var tried []string
		for _, c := range []string{"python3", "/usr/bin/python3"} {
			p, err := exec.LookPath(c)
			if err != nil {
				tried = append(tried, c+": not found")
				continue
			}
			if out, err := exec.Command(p, "-c", "import pytest").CombinedOutput(); err != nil {
				tried = append(tried, p+": "+strings.TrimSpace(lastLine(string(out))))
				continue
			}
			pythonPath = p
			return
		}
		pythonWhy = strings.Join(tried, "; ")
	})
	if pythonPath == "" {
		t.Skipf("!!! NO PYTHON WITH PYTEST (%s): the pytest adapter is NOT tested against real pytest; install it (apt-get install -y "+
			"python3-pytest; .ci/run does) !!!", pythonWhy)
	}
	return pythonPath
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// NeedCTest skips loudly when cmake and ctest are not installed.
func NeedCTest(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"cmake", "ctest"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("!!! %s NOT FOUND: the ctest adapter is NOT tested against real CTest; install it (apt-get install -y cmake; .ci/run does) !!!",
				strings.ToUpper(tool))
		}
	}
}
