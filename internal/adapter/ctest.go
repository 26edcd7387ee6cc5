package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/junit"
)

// ctestSuite is `<label> <logfile> ctest[,split=…] <ctest args…>`; the arguments select the tests both when listing
// and when running.
type ctestSuite struct {
	s config.Suite
}

// maxRegex bounds a split=base item's -R: CMake's regexes refuse to compile past about 64 KiB.
const maxRegex = 16 << 10

// JUnit: the item's command is given its file (Run.JUnit), and the tool always writes it.
func (*ctestSuite) JUnit() JUnit { return JUnitGiven }

func (*ctestSuite) sized() {}

func newCTest(s config.Suite) (Adapter, error) {
	for _, a := range s.Args {
		name, _, _ := strings.Cut(a, "=")
		switch {
		case name == "-N" || name == "--show-only" || strings.HasPrefix(a, "--show-only"):
			return nil, fail(s, nil, "", "argument %q makes ctest list instead of run; the adapter lists by itself, remove it", a)
		case name == "--output-junit":
			return nil, fail(s, nil, "", "argument %q: sgpu-queue gives each item its own JUnit file; remove it", a)
		case name == "--help" || name == "--version":
			return nil, fail(s, nil, "", "argument %q makes ctest print information instead of running tests; remove it", a)
		}
	}
	return &ctestSuite{s: s}, nil
}

// ctestInfo is what the adapter reads of `ctest --show-only=json-v1`.
type ctestInfo struct {
	Kind    string `json:"kind"`
	Version struct {
		Major int `json:"major"`
	} `json:"version"`
	Tests []ctestTest `json:"tests"`
}

type ctestTest struct {
	Name       string `json:"name"`
	Properties []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
}

// ctestListed is one test as the adapter uses it.
type ctestListed struct {
	Name     string
	GPUs     int
	Timeout  time.Duration
	Disabled bool
}

// List runs ctest --show-only=json-v1 with the suite's arguments.
func (c *ctestSuite) List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	return timed(ctx, in, c.s, func(ctx context.Context, in Listing) (*Listed, error) { return c.list(ctx, ex, in) })
}

func (c *ctestSuite) list(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	s := c.s
	args := append(append([]string(nil), s.Args...), "--show-only=json-v1")
	out, err := capture(ctx, ex, in, s, executor.Command{Path: "ctest", Args: args, Env: s.Environ(in.Env), Dir: in.Dir}, "")
	if err != nil {
		return nil, err
	}
	if rc := out.res.ExitCode; rc != 0 {
		return nil, fail(s, nil, out.tail, "ctest --show-only=json-v1 %s exited with %d: is the build there (setup= builds it before listing)?",
			config.QuoteWords(s.Args), rc)
	}
	tests, warns, err := parseShowOnly(out.stdout)
	if err != nil {
		return nil, fail(s, nil, out.tail, "%v", err)
	}
	l := &Listed{Warnings: warns}
	var run []ctestListed
	for _, t := range tests {
		if t.Disabled {
			continue // ctest would report it "Not Run" and fail the item
		}
		run = append(run, t)
	}
	if len(run) == 0 {
		return nil, fail(s, ErrNoItems, out.tail, "ctest lists no tests to run with %q: is the build there (setup= builds it before listing) "+
			"and do -R/-E/-L select any?", s.Args)
	}
	if s.Options.Split == config.SplitBase {
		l.Items = baseItems(run)
	} else {
		for _, t := range run {
			l.Items = append(l.Items, Item{Tag: t.Name, GPUs: t.GPUs, Timeout: t.Timeout})
		}
	}
	return l, nil
}

// parseShowOnly reads ctest's JSON test list; a repeated name is listed once, as -R runs them together.
func parseShowOnly(stdout []byte) ([]ctestListed, []string, error) {
	// ctest may say where it changes directory before the JSON object.
	start := bytes.Index(stdout, []byte("{"))
	if start < 0 {
		return nil, nil, errors.New("ctest --show-only=json-v1 printed no JSON object")
	}
	var info ctestInfo
	if err := json.Unmarshal(stdout[start:], &info); err != nil {
		return nil, nil, fmt.Errorf("ctest --show-only=json-v1 printed no valid JSON: %w", err)
	}
	if info.Kind != "ctestInfo" || info.Version.Major != 1 {
		return nil, nil, fmt.Errorf("ctest --show-only=json-v1 printed kind %q version %d; this adapter reads ctestInfo version 1", info.Kind,
			info.Version.Major)
	}
	var tests []ctestListed
	var warns []string
	seen := map[string]bool{}
	for _, t := range info.Tests {
		switch {
		case t.Name == "" || strings.ContainsAny(t.Name, "\n\r\x00"):
			warns = append(warns, fmt.Sprintf("test %q cannot be selected by name on a command line; skipped", t.Name))
			continue
		case seen[t.Name]:
			warns = append(warns, fmt.Sprintf("test name %q is given to several tests; one item runs them all", t.Name))
			continue
		}
		seen[t.Name] = true
		l := ctestListed{Name: t.Name}
		for _, p := range t.Properties {
			var err error
			switch p.Name {
			case "RESOURCE_GROUPS":
				l.GPUs, err = gpuSlots(p.Value)
			case "TIMEOUT":
				l.Timeout, err = seconds(p.Value)
			case "DISABLED":
				err = json.Unmarshal(p.Value, &l.Disabled)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("test %q: property %s %s: %w", t.Name, p.Name, p.Value, err)
			}
		}
		tests = append(tests, l)
	}
	return tests, warns, nil
}

// gpuSlots is the GPU count a RESOURCE_GROUPS property asks for ("gpus:2" and "2,gpus:1" both give 2).
func gpuSlots(v json.RawMessage) (int, error) {
	var groups []struct {
		Requirements []struct {
			Type  string `json:".type"`
			Slots int    `json:"slots"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(v, &groups); err != nil {
		return 0, err
	}
	n := 0
	for _, g := range groups {
		for _, r := range g.Requirements {
			if r.Type != "gpus" {
				continue
			}
			if r.Slots < 0 || r.Slots > config.MaxGPUs || n+r.Slots > config.MaxGPUs {
				return 0, fmt.Errorf("more than %d GPUs", config.MaxGPUs)
			}
			n += r.Slots
		}
	}
	return n, nil
}

// seconds reads a TIMEOUT property (seconds, fractions allowed; 0 or less: none).
func seconds(v json.RawMessage) (time.Duration, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, err
	}
	if math.IsNaN(f) || f <= 0 {
		return 0, nil
	}
	if f > 1e6 {
		f = 1e6 // beyond eleven days is no limit worth keeping exact
	}
	return time.Duration(f * float64(time.Second)), nil
}

// baseItems groups tests by base name (gtest's Prefix/Suite.Test/Param: one item per test); a group too long for
// one -R is cut into <base>#2, #3, ….
func baseItems(tests []ctestListed) []Item {
	var order []string
	groups := map[string][]ctestListed{}
	for _, t := range tests {
		b := t.Name
		if i := strings.LastIndexByte(b, '/'); i > 0 {
			b = b[:i]
		}
		if _, ok := groups[b]; !ok {
			order = append(order, b)
		}
		groups[b] = append(groups[b], t)
	}
	var items []Item
	for _, b := range order {
		var chunks [][]ctestListed
		size := maxRegex // start a chunk with the first test
		for _, t := range groups[b] {
			n := len(escapeCMakeRegex(t.Name)) + 1
			if size+n > maxRegex {
				chunks = append(chunks, nil)
				size = 0
			}
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], t)
			size += n
		}
		for i, ch := range chunks {
			it := chunkItem(ch)
			it.Tag = b
			if i > 0 {
				it.Tag = fmt.Sprintf("%s#%d", b, i+1)
			}
			items = append(items, it)
		}
	}
	return items
}

// chunkItem runs the tests ch: the hungriest's GPUs, and a time limit (their sum) only when every test has one.
func chunkItem(ch []ctestListed) Item {
	var it Item
	all := true
	for _, t := range ch {
		it.Args = append(it.Args, t.Name)
		it.GPUs = max(it.GPUs, t.GPUs)
		all = all && t.Timeout > 0
		it.Timeout += t.Timeout
	}
	if !all {
		it.Timeout = 0
	}
	return it
}

// Command runs exactly the item's tests (or the narrowed ones): an -R of their names (ctest keeps the last -R) and
// --no-tests=error, so a name that matches nothing fails instead of passing.
func (c *ctestSuite) Command(it Item, run Run) executor.Command {
	ns := names(it)
	args := append(c.selection(narrowTo(ns, run.Only, func(n string) bool { return slices.Contains(ns, n) })), "--no-tests=error")
	if run.JUnit != "" {
		// A relative path would be taken from the build directory.
		j := run.JUnit
		if !filepath.IsAbs(j) {
			j = filepath.Join(run.Dir, j)
		}
		args = append(args, "--output-junit", j)
	}
	return command(c.s, run, "ctest", args)
}

// names are the ctest names an item runs: a split=base item's, else its tag.
func names(it Item) []string {
	if len(it.Args) == 0 {
		return []string{it.Tag}
	}
	return it.Args
}

// selection is the suite's arguments and an -R of exactly ns; the suite's -E still applies.
func (c *ctestSuite) selection(ns []string) []string {
	escaped := make([]string, len(ns))
	for i, n := range ns {
		escaped[i] = escapeCMakeRegex(n)
	}
	re := "^" + escaped[0] + "$"
	if len(escaped) > 1 {
		re = "^(" + strings.Join(escaped, "|") + ")$"
	}
	return append(append([]string(nil), c.s.Args...), "-R", re)
}

// Selects lists what the item's selection picks; exactly its names is its own tag.
func (c *ctestSuite) Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error) {
	s := c.s
	args := append(c.selection(names(it)), "--show-only=json-v1")
	out, err := capture(ctx, ex, in, s, executor.Command{Path: "ctest", Args: args, Env: s.Environ(in.Env), Dir: in.Dir}, "")
	if err != nil {
		return nil, err
	}
	if rc := out.res.ExitCode; rc != 0 {
		return nil, fail(s, nil, out.tail, "ctest --show-only=json-v1 with the item's -R exited with %d", rc)
	}
	tests, _, err := parseShowOnly(out.stdout)
	if err != nil {
		return nil, fail(s, nil, out.tail, "%v", err)
	}
	want := setOf(names(it)...)
	var got []string
	for _, t := range tests {
		got = append(got, t.Name)
	}
	if len(got) == len(want) && !slices.ContainsFunc(got, func(n string) bool { return !want[n] }) {
		return []string{it.Tag}, nil
	}
	return got, nil
}

// escapeCMakeRegex quotes what CMake's regexes give a meaning (cmake-language(7), "Regex Specification").
func escapeCMakeRegex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`^$.[]*+?()|\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestIDs are the item's failed tests for Run.Only, including those CTest writes as skipped for a failing reason
// (a missing executable), not deliberate skips. A failed test not the item's (an added fixture) is ErrCannotNarrow.
func (c *ctestSuite) TestIDs(it Item, path string) ([]string, int, error) {
	cases, err := junit.ReadCases(path)
	if err != nil {
		return nil, 0, err
	}
	own := setOf(names(it)...)
	var ids []string
	seen := map[string]bool{}
	for _, k := range cases {
		if !ctestFailed(k) || seen[k.Name] {
			continue
		}
		if !own[k.Name] {
			return nil, len(cases), fmt.Errorf("%s: failed test %q is not one of item %s's tests: %w", path, k.Name, it.Tag, ErrCannotNarrow)
		}
		seen[k.Name] = true
		ids = append(ids, k.Name)
	}
	return ids, len(cases), nil
}

// ctestFailed reports whether a CTest test case counts as failed for a re-run.
func ctestFailed(k junit.Case) bool {
	switch k.Result {
	case junit.CaseFailed, junit.CaseErrored, junit.CaseUnfinished:
		return true
	case junit.CaseSkipped:
		return !strings.HasPrefix(k.Message, "SKIP_RETURN_CODE=") && k.Message != "SKIP_REGULAR_EXPRESSION_MATCHED" && k.Message != "Disabled"
	}
	return false
}
