package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/hook"
)

// The adapter modes: suites without hook scripts (docs/adapters.md).
const (
	// Pytest suites are a pytest tree: one item per test file (or per test).
	Pytest Mode = "pytest"
	// CTest suites are a CTest build: one item per test.
	CTest Mode = "ctest"
	// Cmd suites are a file of "<tag> <command…>" lines: one item per line.
	Cmd Mode = "cmd"
)

// Split values: how an adapter cuts a suite into items.
const (
	SplitFile = "file" // pytest: one item per test file (the default)
	SplitTest = "test" // pytest: one per node id; ctest: one per test (its default)
	SplitBase = "base" // ctest: one per base name (the name up to its last '/')
)

// MaxGPUs bounds gpus=N: a typo like gpus=80 must not read as a plan.
const MaxGPUs = 1024

// ParseGPUs reads a gpus= value: a plain whole number from 1 to MaxGPUs, or "all" (n 0).
func ParseGPUs(v string) (n int, all bool, err error) {
	if v == "all" {
		return 0, true, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxGPUs || v != strconv.Itoa(n) {
		return 0, false, fmt.Errorf("want a whole number from 1 to %d, or all (the whole pool)", MaxGPUs)
	}
	return n, false, nil
}

// MultiGPU reports whether gpus= makes a multi-GPU suite, run with the hook's multi-GPU switch.
func (m Options) MultiGPU() bool { return m.AllGPUs || m.GPUs > 1 }

// Options are the options of a mode field, "<mode>[,key=value…]".
type Options struct {
	// GPUs is each item's count from gpus=N; 0 when not given. AllGPUs is gpus=all.
	GPUs    int
	AllGPUs bool
	// Split is how the suite is cut into items ("" = the mode's default).
	Split string
	// Python is the interpreter that runs pytest ("" = python3 on PATH).
	Python string
	// Setup is a shell command run once from the repo root before listing (a build the listing needs).
	Setup string
	// Env is NAME=VALUE settings for the suite's listing, setup and items, in order.
	Env []string
}

// option is one key a mode field may carry.
type option struct {
	modes []Mode // the modes that take it
	set   func(m *Options, mode Mode, v string) error
}

var allModes = []Mode{List, Opaque, Pytest, CTest, Cmd}

// options are the keys of the mode field; docs/adapters.md describes each.
func options() map[string]option {
	return map[string]option{
		"gpus": {allModes, func(m *Options, mode Mode, v string) error {
			n, all, err := ParseGPUs(v)
			if err != nil {
				return fmt.Errorf("option %q: %w", "gpus="+v, err)
			}
			m.GPUs, m.AllGPUs = n, all
			return nil
		}},
		"split": {[]Mode{Pytest, CTest}, func(m *Options, mode Mode, v string) error {
			want := map[Mode][]string{Pytest: {SplitFile, SplitTest}, CTest: {SplitTest, SplitBase}}[mode]
			for _, w := range want {
				if v == w {
					m.Split = v
					return nil
				}
			}
			return fmt.Errorf("option %q: a %s suite splits by %s", "split="+v, mode, orList(want))
		}},
		"python": {[]Mode{Pytest}, func(m *Options, mode Mode, v string) error {
			m.Python = v
			return nil
		}},
		"setup": {[]Mode{Pytest, CTest, Cmd}, func(m *Options, mode Mode, v string) error {
			m.Setup = v
			return nil
		}},
		"env": {allModes, func(m *Options, mode Mode, v string) error {
			name, _, ok := strings.Cut(v, "=")
			if !ok || !hook.ValidName(name) {
				return fmt.Errorf("option %q: want env=NAME=VALUE, NAME of letters, digits and _ not starting with a digit", "env="+v)
			}
			m.Env = append(m.Env, v)
			return nil
		}},
	}
}

// ParseMode reads a mode field: the mode, then comma-separated key=value options, so a value cannot hold a comma.
// Messages name the fix; the caller adds file and line.
func ParseMode(field string) (Mode, Options, error) {
	name, rest, hasOpts := strings.Cut(field, ",")
	mode := Mode(name)
	var m Options
	if !slices.Contains(allModes, mode) {
		return mode, m, fmt.Errorf("unknown mode %q: use %s", name, orList(modeNames()))
	}
	if !hasOpts {
		return mode, m, nil
	}
	opts := options()
	seen := map[string]bool{}
	prev := ""
	for _, o := range strings.Split(rest, ",") {
		key, val, ok := strings.Cut(o, "=")
		opt, known := opts[key]
		switch {
		case o == "":
			return mode, m, fmt.Errorf("mode %q: empty option (two commas, or one at the end)", field)
		case !known && prev == "env" && ok && hook.ValidName(key):
			return mode, m, fmt.Errorf("option %q: a value cannot hold a comma; set each variable with its own env= (env=A=1,env=B=2)", o)
		case !known:
			return mode, m, fmt.Errorf("unknown option %q for mode %s: it takes %s", key, mode, orList(keysFor(mode)))
		case !slices.Contains(opt.modes, mode):
			return mode, m, fmt.Errorf("option %s= is not for mode %s (only %s)", key, mode, orList(modeStrings(opt.modes)))
		case !ok || val == "":
			return mode, m, fmt.Errorf("option %q: want %s=VALUE", o, key)
		case seen[key] && key != "env":
			return mode, m, fmt.Errorf("option %s= given twice", key)
		}
		seen[key] = true
		prev = key
		if err := opt.set(&m, mode, val); err != nil {
			return mode, m, err
		}
	}
	return mode, m, nil
}

func modeNames() []string { return modeStrings(allModes) }

func modeStrings(ms []Mode) []string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return s
}

// keysFor lists the options a mode takes, sorted.
func keysFor(m Mode) []string {
	var ks []string
	for k, o := range options() {
		if slices.Contains(o.modes, m) {
			ks = append(ks, k+"=")
		}
	}
	sort.Strings(ks)
	return ks
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
