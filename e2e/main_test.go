// Package e2e holds the end-to-end tests: they build the sgpu-queue binary once and
// run it, as a user or the runner would, on the fixture suites in ../testdata, which
// honour the hook contract with real processes (sleeping, failing, crashing items).
package e2e

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/treetest"

	// Linked in only so that `go test` caching sees every change to the code the
	// binary is built from (the build in TestMain is invisible to the cache).
	_ "github.com/rocm/sgpu-queue/internal/cli"
)

var binary string

// parallel is how many of these tests run at once unless -parallel says otherwise:
// they wait on their runs' processes far more than they compute, so go test's
// default (one per CPU: 2 on CI) leaves the machine idle while a run sleeps.
const parallel = 6

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	dir, err := os.MkdirTemp("", "sgpu-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sgpu-queue")
	// The test hooks (internal/cli/testhooks_on.go) let a test inject faults no
	// suite can cause; a release build has none.
	build := exec.Command("go", "build", "-race", "-tags", "sgpu_testhooks", "-o", binary, "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sgpu-queue:", err)
		os.Exit(1)
	}
	code := m.Run()
	removeBuiltImage()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture copies testdata/<name> into a fresh directory (runs write into the repo
// root: test-results/, ci-weights/) and returns it.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	copyFixture(t, name, dst)
	return dst
}

// copyFixture copies testdata/<name> into dst, merging with what is there, leaving
// out what a run of the fixture writes (test-results/, ci-weights/) and Python's
// caches.
func copyFixture(t *testing.T, name, dst string) {
	t.Helper()
	treetest.Copy(t, filepath.Join("..", "testdata", name), dst, func(rel string, d fs.DirEntry) bool {
		return d.IsDir() && (rel == "test-results" || rel == "ci-weights" || d.Name() == "__pycache__" || d.Name() == ".pytest_cache")
	})
}

// result is one run of the binary.
type result struct {
	code   int
	stdout string
	stderr string
}

// command is the binary with args, to run in dir with a clean environment (PATH and
// HOME) plus env.
func command(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	return cmd
}

// start starts the binary as command builds it, its stdout and stderr together in
// the buffer returned, for a test that watches or signals the run as it goes.
func start(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := command(dir, env, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// sgpu runs the binary in dir with a clean environment plus env.
func sgpu(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := command(dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errb.String(), "panic:") || strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "DATA RACE") {
		t.Fatalf("the binary panicked or raced:\n%s", errb.String())
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// event is one line of a fixture's trace file.
type event struct {
	kind, suite, tag  string
	ns                int64
	gpu, skip, filter string
	prefix, pwd       string
	sgpu, mgpu        string // TEST_SGPU, TEST_MGPU ("unset" when unset)
}

func readTrace(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 11 {
			t.Fatalf("bad trace line %q", sc.Text())
		}
		ns, _ := strconv.ParseInt(f[1], 10, 64)
		evs = append(evs, event{kind: f[0], ns: ns, suite: f[2], tag: f[3], gpu: f[4], skip: f[5], filter: f[6], prefix: f[7], pwd: f[8],
			sgpu: f[9], mgpu: f[10]})
	}
	return evs
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// validateJUnit checks a file against the JUnit schema with xmllint (.ci/run installs
// it; without it the check is skipped loudly).
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xsd := filepath.Join("..", "internal", "junit", "testdata", "junit-10-relaxed.xsd")
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("XMLLINT MISSING: JUnit schema validation skipped (apt-get install libxml2-utils)")
	}
	out, err := exec.Command("xmllint", "--noout", "--schema", xsd, path).CombinedOutput()
	if err != nil {
		t.Errorf("%s does not validate:\n%s", path, out)
	}
}
