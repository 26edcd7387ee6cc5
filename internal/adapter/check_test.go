package adapter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
)

// selects runs an item's Selects as verify does.
func selects(t *testing.T, a Adapter, repo string, it Item) []string {
	t.Helper()
	c, ok := a.(Checker)
	if !ok {
		t.Fatalf("%T is not a Checker", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := c.Selects(ctx, executor.Local{Grace: time.Second}, Listing{Env: testEnv(), Dir: repo}, it)
	if err != nil {
		t.Fatalf("Selects(%q): %v", it.Tag, err)
	}
	return got
}

// Every listed item of a ctest suite selects exactly itself, split=test and
// split=base alike; an item whose names are gone, or whose -R would take another
// test too, says what it selects instead.
func TestCTestSelects(t *testing.T) {
	repo, specs := teCore(t)
	for _, s := range append(specs, spec(t, "c c.log ctest --test-dir tests/cpp/build")) {
		a := mustNew(t, s)
		l, err := list(t, a, repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			if got := selects(t, a, repo, it); !cmp.Equal(got, []string{it.Tag}) {
				t.Errorf("%s: item %q selects %q, want itself", s.Label, it.Tag, got)
			}
		}
	}
	a := mustNew(t, spec(t, "c c.log ctest --test-dir tests/cpp/build"))
	if got := selects(t, a, repo, Item{Tag: "Gone.Test"}); len(got) != 0 {
		t.Errorf("a gone test selects %q, want nothing", got)
	}
	// A base item missing one of its names selects fewer tests than it runs.
	it := Item{Tag: "Weird", Args: []string{"Weird.Name", "Weird.Name2", "Weird.Gone"}}
	if got := selects(t, a, repo, it); !cmp.Equal(got, []string{"Weird.Name", "Weird.Name2"}) {
		t.Errorf("selects %q, want the two names that exist", got)
	}
}

// A pytest item collects its own file (split=file) or its own node id (split=test);
// a file that no longer holds a test selects nothing.
func TestPytestSelects(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	for _, line := range []string{
		"u u.log pytest,python=" + py + ` -k "not broken" tests`,
		"u u.log pytest,split=test,python=" + py + " tests/test_pass.py tests/nested",
	} {
		a := mustNew(t, spec(t, line))
		l, err := list(t, a, repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			if got := selects(t, a, repo, it); !cmp.Equal(got, []string{it.Tag}) {
				t.Errorf("%s: item %q selects %q, want itself", line, it.Tag, got)
			}
		}
	}
	a := mustNew(t, spec(t, "u u.log pytest,python="+py+` -k "not broken" tests`))
	if got := selects(t, a, repo, Item{Tag: "tests/test_skip.py", Args: []string{"-k", "nothing_matches_this"}}); len(got) != 0 {
		t.Errorf("deselected file selects %q, want nothing", got)
	}
}

func TestCheck(t *testing.T) {
	suites := []config.Suite{
		{Label: "ok", Mode: config.Pytest, Args: []string{"tests"}, File: "c.conf", Line: 1},
		{Label: "lst", Mode: config.List, Command: "x.sh", File: "c.conf", Line: 2},
		{Label: "bad", Mode: config.Pytest, Args: []string{"--junitxml=x.xml"}, File: "c.conf", Line: 3},
		{Label: "bad2", Mode: config.Cmd, File: "c.conf", Line: 4},
	}
	err := Check(suites)
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("Check: %v, want *Error", err)
	}
	msg := err.Error()
	for _, w := range []string{`c.conf:3: suite "bad": argument "--junitxml=x.xml"`, `c.conf:4: suite "bad2": want`} {
		if !strings.Contains(msg, w) {
			t.Errorf("Check's message lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, `"ok"`) || strings.Contains(msg, `"lst"`) {
		t.Errorf("Check blames a good suite:\n%s", msg)
	}
	if err := Check(suites[:2]); err != nil {
		t.Errorf("Check of good suites: %v", err)
	}
}
