package adapter

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/adaptertest"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/treetest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// fixture copies testdata/adapters/<name> to a fresh directory, the repo root of a
// test: items write caches and builds there, never into the source tree.
func fixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "adapters", name)
	dst := filepath.Join(t.TempDir(), "repo")
	treetest.Copy(t, src, dst, func(_ string, d fs.DirEntry) bool {
		return d.IsDir() && (d.Name() == "__pycache__" || d.Name() == ".pytest_cache" || d.Name() == "build")
	})
	return dst
}

// testEnv is the environment of listings and items in these tests: this process's
// PATH, no bytecode written into the fixture, nothing else inherited.
func testEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PYTHONDONTWRITEBYTECODE=1", "LC_ALL=C.UTF-8"}, extra...)
}

// pytestPython is an interpreter that can import pytest (tests skip loudly without).
func pytestPython(t *testing.T) string { return adaptertest.Python(t) }

// needCTest skips loudly when cmake and ctest are not installed.
func needCTest(t *testing.T) { adaptertest.NeedCTest(t) }

// spec is an adapter suite read from a config line the way the config will read it
// (split into words, the mode field parsed): "<label> <logfile> <mode> <args…>".
func spec(t *testing.T, line string) config.Suite {
	t.Helper()
	f, err := config.SplitFields(line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if len(f) < 3 {
		t.Fatalf("%q: want <label> <logfile> <mode> <args…>", line)
	}
	mode, opts, err := config.ParseMode(f[2])
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return config.Suite{Label: f[0], File: "test.conf", Line: 1, Mode: mode, Options: opts, Args: f[3:]}
}

func mustNew(t *testing.T, s config.Suite) Adapter {
	t.Helper()
	a, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// list lists s from repo with a log the test can print on failure.
func list(t *testing.T, a Adapter, repo string, env ...string) (*Listed, error) {
	t.Helper()
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := a.List(ctx, executor.Local{Grace: time.Second}, Listing{Env: testEnv(env...), Dir: repo, Log: &log})
	if err != nil {
		t.Logf("listing log:\n%s", log.String())
	}
	return l, err
}

func tags(l *Listed) []string {
	var s []string
	for _, it := range l.Items {
		s = append(s, it.Tag)
	}
	return s
}

// ran is one item run for real.
type ran struct {
	rc     int
	out    string
	junit  string // the path it was given
	suites []xSuite
}

// runItem runs one item through executor.Local with its JUnit file where given.
func runItem(t *testing.T, a Adapter, it Item, repo, junit string, env ...string) ran {
	t.Helper()
	r, err := tryItem(a, it, repo, junit, env...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryItem is runItem for goroutines other than the test's: it reports instead of
// failing the test.
func tryItem(a Adapter, it Item, repo, junit string, env ...string) (ran, error) {
	return tryNarrowed(a, it, nil, repo, junit, env...)
}

// tryNarrowed is tryItem narrowed to the tests only (Run.Only).
func tryNarrowed(a Adapter, it Item, only []string, repo, junit string, env ...string) (ran, error) {
	var out bytes.Buffer
	c := a.Command(it, Run{Env: testEnv(env...), Dir: repo, JUnit: junit, Stdout: &out, Stderr: &out, Only: only})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := executor.Local{Grace: time.Second}.Run(ctx, c)
	if err != nil {
		return ran{}, fmt.Errorf("item %q: %v", it.Tag, err)
	}
	r := ran{rc: res.ExitCode, out: out.String(), junit: junit}
	if junit != "" {
		data, err := os.ReadFile(junit)
		if err != nil {
			return r, fmt.Errorf("item %q: no JUnit where asked: %v\n%s", it.Tag, err, r.out)
		}
		if r.suites, err = parseJUnit(data); err != nil {
			return r, fmt.Errorf("item %q: %v", it.Tag, err)
		}
	}
	return r, nil
}

// The JUnit the tools write, as much as these tests read: pytest's root is
// <testsuites>, ctest's a bare <testsuite>.
type xSuite struct {
	Cases []xCase `xml:"testcase"`
}

type xCase struct {
	Name      string  `xml:"name,attr"`
	Classname string  `xml:"classname,attr"`
	Failure   *string `xml:"failure"`
	Error     *string `xml:"error"`
	Skipped   *string `xml:"skipped"`
	Props     []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Out string `xml:"system-out"`
}

func (c xCase) status() string {
	switch {
	case c.Failure != nil:
		return "failed"
	case c.Error != nil:
		return "error"
	case c.Skipped != nil:
		return "skipped"
	}
	return "passed"
}

func (c xCase) prop(name string) string {
	for _, p := range c.Props {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

func parseJUnit(data []byte) ([]xSuite, error) {
	var root struct {
		XMLName xml.Name
		Suites  []xSuite `xml:"testsuite"`
		Cases   []xCase  `xml:"testcase"`
	}
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("JUnit: %v\n%s", err, data)
	}
	if root.XMLName.Local == "testsuite" {
		return []xSuite{{Cases: root.Cases}}, nil
	}
	return root.Suites, nil
}

// cases is every test case of a run, "name=status".
func (r ran) cases() map[string]xCase {
	m := map[string]xCase{}
	for _, s := range r.suites {
		for _, c := range s.Cases {
			m[c.Name] = c
		}
	}
	return m
}

func (r ran) statuses() map[string]string {
	m := map[string]string{}
	for n, c := range r.cases() {
		m[n] = c.status()
	}
	return m
}
