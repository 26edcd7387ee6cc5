package adapter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"github.com/rocm/sgpu-queue/internal/config"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/junit"
)

// teCore copies the TE fixture, reads its ci/core.conf (TE's core as ctest suites)
// and runs the suites' setup commands, each distinct one once, as the engine will.
func teCore(t *testing.T) (repo string, specs []config.Suite) {
	t.Helper()
	needCTest(t)
	repo = fixture(t, "te")
	f, err := os.Open(filepath.Join(repo, "ci", "core.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			specs = append(specs, spec(t, line))
		}
	}
	done := map[string]bool{}
	for _, s := range specs {
		var log bytes.Buffer
		c, ok := Setup(s, Listing{Env: testEnv(), Dir: repo, Log: &log})
		if !ok || done[strings.Join(c.Args, " ")] {
			continue
		}
		done[strings.Join(c.Args, " ")] = true
		res, err := executor.Local{}.Run(context.Background(), c)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("setup of %s: %v rc %d\n%s", s.Label, err, res.ExitCode, log.String())
		}
	}
	if len(done) != 1 {
		t.Fatalf("%d distinct setup commands in core.conf, want the one build", len(done))
	}
	return repo, specs
}

// TE's core, as the three ctest suites of docs/adapters.md, on the fixture tree:
// what each lists, the GPUs and limits it carries, and every item run for real, at
// once, in the one build directory.
func TestCTestTECore(t *testing.T) {
	repo, specs := teCore(t)
	type want struct {
		tests   []string
		gpus    int
		timeout time.Duration
		rc      int
	}
	cast := []string{"OperatorTest/CastTestSuite.TestCast/0", "OperatorTest/CastTestSuite.TestCast/1",
		"OperatorTest/CastTestSuite.TestCast/fp32Xfp16X1x2048", "OperatorTest/CastTestSuite.TestCast/bf16Xfp8X64x64"}
	wants := map[string]map[string]want{
		"core": {
			"OperatorTest/CastTestSuite.TestCast": {tests: cast},
			"OperatorTest/NormTestSuite.TestNorm": {tests: []string{"OperatorTest/NormTestSuite.TestNorm/LayerNorm"}},
			`Weird.Name(1)|[x]*?+$^\`:             {tests: []string{`Weird.Name(1)|[x]*?+$^\`}},
			"Weird.Name":                          {tests: []string{"Weird.Name"}},
			"Weird.Name2":                         {tests: []string{"Weird.Name2"}},
			"Space Name.Case":                     {tests: []string{"Space Name.Case"}},
			"MultiGpu/AllReduce.Sum":              {tests: []string{"MultiGpu/AllReduce.Sum/0", "MultiGpu/AllReduce.Sum/1"}, gpus: 2},
			"Fails.Always":                        {tests: []string{"Fails.Always"}, rc: 8},
			"Slow.PastTimeout":                    {tests: []string{"Slow.PastTimeout"}, timeout: time.Second, rc: 8},
		},
		"core-hipblaslt": {
			"OperatorTest/GEMMTestSuite.Testfp32xfp32": {tests: []string{"OperatorTest/GEMMTestSuite.Testfp32xfp32/16X16X16XNN"}},
		},
		"core-rocblas": {
			"OperatorTest/GEMMTestSuite.Testfp32xfp32": {tests: []string{"OperatorTest/GEMMTestSuite.Testfp32xfp32/16X16X16XNN"}},
			"OperatorTest/GEMMTestSuite.Testbf16xbf16": {tests: []string{"OperatorTest/GEMMTestSuite.Testbf16xbf16/32X0X1"}},
			"OperatorTest/GEMMTestSuite.Testfp8xfp8":   {tests: []string{"OperatorTest/GEMMTestSuite.Testfp8xfp8/16X16X16XNN"}},
		},
	}
	backend := map[string]string{
		"core":           "NVTE_USE_HIPBLASLT= NVTE_USE_ROCBLAS=",
		"core-hipblaslt": "NVTE_USE_HIPBLASLT=1 NVTE_USE_ROCBLAS=",
		"core-rocblas":   "NVTE_USE_HIPBLASLT= NVTE_USE_ROCBLAS=1",
	}
	// Every item of the three suites at once, in the one build directory, as a
	// runner's GPUs would run them. JUnit files are named as a run names them
	// (junit.ItemFile): CMake would turn a backslash in a path into a slash.
	junitDir := filepath.Join(t.TempDir(), "junit")
	type job struct {
		label string
		a     Adapter
		it    Item
		pin   string
		r     ran
		err   error
	}
	var jobs []*job
	for _, s := range specs {
		a := mustNew(t, s)
		l, err := list(t, a, repo)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]want{}
		for _, it := range l.Items {
			got[it.Tag] = want{tests: it.Args, gpus: it.GPUs, timeout: it.Timeout, rc: wants[s.Label][it.Tag].rc}
			pin := "0"
			if it.GPUs == 2 {
				pin = "2,3"
			}
			jobs = append(jobs, &job{label: s.Label, a: a, it: it, pin: pin})
		}
		if diff := cmp.Diff(wants[s.Label], got, cmp.AllowUnexported(want{})); diff != "" {
			t.Errorf("suite %s: items (-want +got):\n%s", s.Label, diff)
		}
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.r, j.err = tryItem(j.a, j.it, repo, itemJUnit(junitDir, j.label, j.it.Tag), "HIP_VISIBLE_DEVICES="+j.pin)
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			t.Error(j.err)
			continue
		}
		w := wants[j.label][j.it.Tag]
		if j.r.rc != w.rc {
			t.Errorf("%s/%s: rc %d, want %d\n%s", j.label, j.it.Tag, j.r.rc, w.rc, j.r.out)
		}
		var names []string
		for n, c := range j.r.cases() {
			names = append(names, n)
			if w.rc == 0 && !strings.Contains(c.Out, backend[j.label]+" HIP_VISIBLE_DEVICES="+j.pin) {
				t.Errorf("%s/%s: test %s printed %q, want the back-end %q and the pin %s", j.label, j.it.Tag, n, c.Out, backend[j.label], j.pin)
			}
		}
		if diff := cmp.Diff(sorted(w.tests), sorted(names)); diff != "" {
			t.Errorf("%s/%s ran (-want +got): exactly the item's tests\n%s", j.label, j.it.Tag, diff)
		}
	}
}

// itemJUnit is the JUnit file a run gives an item of suite label.
func itemJUnit(dir, label, tag string) string {
	rel, _ := junit.ItemFile(tag, ".xml", true)
	return filepath.Join(dir, label, filepath.FromSlash(rel))
}

func TestCTestSplitTest(t *testing.T) {
	repo, _ := teCore(t)
	a := mustNew(t, spec(t, "c c.log ctest --test-dir tests/cpp/build"))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	again, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tags(l), tags(again)); diff != "" {
		t.Errorf("a second listing differs (-first +second):\n%s", diff)
	}
	if len(l.Items) != 17 {
		t.Errorf("%d items, want the fixture's 17 enabled tests: %q", len(l.Items), tags(l))
	}
	byTag := map[string]Item{}
	for _, it := range l.Items {
		byTag[it.Tag] = it
		if strings.HasPrefix(it.Tag, "DISABLED_") {
			t.Errorf("disabled test %q listed", it.Tag)
		}
	}
	for tag, w := range map[string]Item{
		"MultiGpu/AllReduce.Sum/0": {Tag: "MultiGpu/AllReduce.Sum/0", GPUs: 2}, // gpus:2
		"MultiGpu/AllReduce.Sum/1": {Tag: "MultiGpu/AllReduce.Sum/1", GPUs: 2}, // 2,gpus:1
		"Slow.PastTimeout":         {Tag: "Slow.PastTimeout", Timeout: time.Second},
		"Weird.Name":               {Tag: "Weird.Name"},
	} {
		if diff := cmp.Diff(w, byTag[tag]); diff != "" {
			t.Errorf("item %s (-want +got):\n%s", tag, diff)
		}
	}
	// The exact command, and that its -R selects exactly one test: names that are
	// prefixes of others and names full of regular-expression characters.
	junit := filepath.Join(t.TempDir(), "j.xml")
	c := a.Command(byTag[`Weird.Name(1)|[x]*?+$^\`], Run{Dir: repo, JUnit: junit})
	want := []string{"--test-dir", "tests/cpp/build", "-R", `^Weird\.Name\(1\)\|\[x\]\*\?\+\$\^\\$`, "--no-tests=error", "--output-junit", junit}
	if diff := cmp.Diff(want, c.Args); diff != "" || c.Path != "ctest" || c.Dir != repo {
		t.Errorf("command %s %q in %s (-want +got args):\n%s", c.Path, c.Args, c.Dir, diff)
	}
	for _, tag := range []string{`Weird.Name(1)|[x]*?+$^\`, "Weird.Name", "Weird.Name2", "Space Name.Case", "OperatorTest/CastTestSuite.TestCast/1"} {
		t.Run(tag, func(t *testing.T) {
			t.Parallel()
			r := runItem(t, a, byTag[tag], repo, filepath.Join(t.TempDir(), "sub", "j.xml"))
			if diff := cmp.Diff(map[string]string{tag: "passed"}, r.statuses()); diff != "" || r.rc != 0 {
				t.Errorf("rc %d, ran (-want +got):\n%s\n%s", r.rc, diff, r.out)
			}
		})
	}
	// A relative JUnit path is the repo root's, not the build directory's.
	if c := a.Command(byTag["Weird.Name"], Run{Dir: repo, JUnit: "out/j.xml"}); c.Args[len(c.Args)-1] != filepath.Join(repo, "out/j.xml") {
		t.Errorf("relative JUnit path given as %q", c.Args[len(c.Args)-1])
	}
	// A name that matches nothing (the build changed under the queue) fails.
	r := runItem(t, a, Item{Tag: "Gone.Test"}, repo, "")
	if r.rc == 0 {
		t.Errorf("an item whose test is gone exited 0:\n%s", r.out)
	}
}

func TestCTestListingFails(t *testing.T) {
	needCTest(t)
	bare := fixture(t, "te") // not built
	_, err := list(t, mustNew(t, spec(t, "c c.log ctest --test-dir tests/cpp/build")), bare)
	if err == nil || !strings.Contains(err.Error(), `test.conf:1: suite "c": ctest --show-only=json-v1 --test-dir tests/cpp/build exited with 1: is the build there (setup= builds it before listing)?`) {
		t.Errorf("unbuilt tree: err = %v", err)
	}
	repo, _ := teCore(t)
	_, err = list(t, mustNew(t, spec(t, "c c.log ctest --test-dir tests/cpp/build -R NoSuchTest")), repo)
	if !errors.Is(err, ErrNoItems) || !strings.Contains(err.Error(), "ctest lists no tests to run") {
		t.Errorf("nothing selected: err = %v, want ErrNoItems", err)
	}
}

func TestCTestRefusesArgs(t *testing.T) {
	for _, arg := range []string{"-N", "--show-only", "--show-only=json-v1", "--output-junit", "--version"} {
		_, err := New(config.Suite{Label: "c", File: "c.conf", Line: 2, Mode: config.CTest, Args: []string{"--test-dir", "build", arg}})
		if err == nil || !strings.HasPrefix(err.Error(), `c.conf:2: suite "c": argument "`+arg+`"`) {
			t.Errorf("%s: err = %v, want it refused naming the line and the argument", arg, err)
		}
	}
}

func TestParseShowOnly(t *testing.T) {
	head := `{"kind":"ctestInfo","version":{"major":1,"minor":0},"tests":[`
	tests := []struct {
		name  string
		in    string
		want  []ctestListed
		warns int
		err   string
	}{
		{name: "resource groups", in: head + `
			{"name":"a","properties":[{"name":"RESOURCE_GROUPS","value":[{"requirements":[{".type":"gpus","slots":2}]}]}]},
			{"name":"b","properties":[{"name":"RESOURCE_GROUPS","value":[{"requirements":[{".type":"gpus","slots":1}]},{"requirements":[{".type":"gpus","slots":1},{".type":"crypto","slots":4}]}]}]},
			{"name":"c","properties":[{"name":"RESOURCE_GROUPS","value":[{"requirements":[{".type":"crypto","slots":1}]}]}]}]}`,
			want: []ctestListed{{Name: "a", GPUs: 2}, {Name: "b", GPUs: 2}, {Name: "c"}}},
		{name: "timeout and disabled", in: head + `
			{"name":"t","properties":[{"name":"TIMEOUT","value":1.5},{"name":"WORKING_DIRECTORY","value":"/x"}]},
			{"name":"z","properties":[{"name":"TIMEOUT","value":-1}]},
			{"name":"d","properties":[{"name":"DISABLED","value":true}]}]}`,
			want: []ctestListed{{Name: "t", Timeout: 1500 * time.Millisecond}, {Name: "z"}, {Name: "d", Disabled: true}}},
		{name: "noise before the object", in: "Internal ctest changing into directory: /b\n" + head + `{"name":"a"}]}`,
			want: []ctestListed{{Name: "a"}}},
		{name: "duplicate and unusable names", in: head + `{"name":"a"},{"name":"a"},{"name":""},{"name":"x\ny"}]}`,
			want: []ctestListed{{Name: "a"}}, warns: 3},
		{name: "backslash", in: head + `{"name":"a\\b"}]}`, want: []ctestListed{{Name: `a\b`}}},
		{name: "no tests", in: head + `]}`},
		{name: "empty", in: "", err: "printed no JSON object"},
		{name: "truncated", in: head + `{"name":"a"`, err: "printed no valid JSON"},
		{name: "other kind", in: `{"kind":"codemodel","version":{"major":1}}`, err: `kind "codemodel" version 1`},
		{name: "version 2", in: `{"kind":"ctestInfo","version":{"major":2}}`, err: "version 2; this adapter reads ctestInfo version 1"},
		{name: "bad groups", in: head + `{"name":"a","properties":[{"name":"RESOURCE_GROUPS","value":"gpus:2"}]}]}`, err: `test "a": property RESOURCE_GROUPS "gpus:2"`},
		{name: "too many gpus", in: head + `{"name":"a","properties":[{"name":"RESOURCE_GROUPS","value":[{"requirements":[{".type":"gpus","slots":99999}]}]}]}]}`, err: "more than 1024 GPUs"},
		{name: "bad timeout", in: head + `{"name":"a","properties":[{"name":"TIMEOUT","value":"long"}]}]}`, err: `property TIMEOUT "long"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns, err := parseShowOnly([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || len(warns) != tt.warns {
				t.Errorf("tests (-want +got):\n%s\nwarnings %q, want %d", diff, warns, tt.warns)
			}
		})
	}
}

func FuzzParseShowOnly(f *testing.F) {
	f.Add([]byte(`{"kind":"ctestInfo","version":{"major":1},"tests":[{"name":"a/b.c/0","properties":[{"name":"RESOURCE_GROUPS","value":[{"requirements":[{".type":"gpus","slots":2}]}]},{"name":"TIMEOUT","value":3}]}]}`))
	f.Add([]byte(`x{"kind":"ctestInfo","version":{"major":1},"tests":[{"name":"d","properties":[{"name":"DISABLED","value":true}]},{"name":"d"}]}`))
	f.Add([]byte(`{"kind":"ctestInfo","version":{"major":1},"tests":[{"name":"t","properties":[{"name":"TIMEOUT","value":1e308}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tests, _, err := parseShowOnly(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, tc := range tests {
			if tc.Name == "" || seen[tc.Name] || strings.ContainsAny(tc.Name, "\n\r\x00") {
				t.Fatalf("test %q listed (empty, repeated or not a one-line name)", tc.Name)
			}
			seen[tc.Name] = true
			if tc.GPUs < 0 || tc.GPUs > 1024 || tc.Timeout < 0 {
				t.Fatalf("test %q: gpus %d timeout %v", tc.Name, tc.GPUs, tc.Timeout)
			}
		}
		// Whatever the names, each item's -R matches its own names and no other.
		for _, it := range baseItems(tests) {
			c := (&ctestSuite{}).Command(it, Run{})
			re := c.Args[len(c.Args)-2]
			if len(re) > maxRegex+len(`^()$`) && len(it.Args) > 1 {
				t.Fatalf("item %q: -R of %d bytes", it.Tag, len(re))
			}
			checkRegex(t, re, it.Args, tests)
		}
	})
}

// checkRegex checks, with Go's regexp (which reads these escapes as CMake does),
// that re matches exactly the names in mine among all.
func checkRegex(t *testing.T, re string, mine []string, all []ctestListed) {
	t.Helper()
	// CMake has no {n} repetition: its braces are literal, Go's must be quoted.
	rx, err := regexp.Compile(strings.NewReplacer("{", `\{`, "}", `\}`).Replace(re))
	if err != nil {
		return // not UTF-8: Go's regexp cannot say; CMake's reads bytes
	}
	in := map[string]bool{}
	for _, n := range mine {
		in[n] = true
	}
	for _, tc := range all {
		if rx.MatchString(tc.Name) != in[tc.Name] {
			t.Fatalf("-R %q matches %q: %v, want %v", re, tc.Name, !in[tc.Name], in[tc.Name])
		}
	}
}

func TestBaseItemsChunks(t *testing.T) {
	var tests []ctestListed
	for i := range 3000 {
		tests = append(tests, ctestListed{Name: "OperatorTest/Huge.Case/" + strings.Repeat("p", 20) + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + "_" + strconv.Itoa(i), Timeout: time.Second})
	}
	tests = append(tests, ctestListed{Name: "Small.One", GPUs: 2}, ctestListed{Name: "OperatorTest/Huge.Case/no_timeout"})
	items := baseItems(tests)
	var names []string
	for i, it := range items[:len(items)-1] {
		want := "OperatorTest/Huge.Case"
		if i > 0 {
			want += "#" + strconv.Itoa(i+1)
		}
		if it.Tag != want {
			t.Errorf("item %d tag %q, want %q", i, it.Tag, want)
		}
		re := (&ctestSuite{}).Command(it, Run{}).Args[1]
		if len(re) > maxRegex+4 {
			t.Errorf("item %s: -R of %d bytes, over %d", it.Tag, len(re), maxRegex)
		}
		names = append(names, it.Args...)
	}
	if len(items) < 3 || len(names) != 3001 {
		t.Errorf("%d items holding %d names; want the 3001 Huge.Case tests cut into several items", len(items), len(names))
	}
	// A test listed later joins its group; its missing TIMEOUT voids the sum.
	if last := items[len(items)-2]; last.Timeout != 0 || last.Args[len(last.Args)-1] != "OperatorTest/Huge.Case/no_timeout" {
		t.Errorf("last chunk: timeout %v, names end %q", last.Timeout, last.Args[len(last.Args)-1])
	}
	if first := items[0]; first.Timeout != time.Duration(len(first.Args))*time.Second {
		t.Errorf("first chunk: timeout %v for %d tests of 1s", first.Timeout, len(first.Args))
	}
	if small := items[len(items)-1]; small.Tag != "Small.One" || small.GPUs != 2 {
		t.Errorf("last item %+v", small)
	}
}

func TestEscapeCMakeRegex(t *testing.T) {
	if got, want := escapeCMakeRegex(`a.b^$[]*+?()|\/-{}`), `a\.b\^\$\[\]\*\+\?\(\)\|\\/-{}`; got != want {
		t.Errorf("escapeCMakeRegex = %q, want %q", got, want)
	}
}
