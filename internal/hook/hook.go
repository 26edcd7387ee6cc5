// Package hook holds the suite hook contract (docs/hooks.md): the variables that ask a suite script to list, set up
// or run an item. The names default to TransformerEngine's and can be renamed, so other projects keep theirs.
package hook

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Names are the variable names of the contract.
type Names struct {
	ListItems          string // print "<ItemMarker> <tag>" per item instead of running
	SkipCheckSupported string // with ListItems: answer every capability probe "supported"
	SetupOnly          string // run the one-time setup and exit
	SkipSetup          string // setup already done
	Filter             string // run only the item with this tag
	OnlyTests          string // a re-run: the file of the item's tests to run (docs/reruns.md)
	JUnitPrefix        string // where the suite writes JUnit XML
	JUnitSuffix        string // suffix of those files
	Level              string // test level
	SGPU               string // "1": single-GPU items only
	MGPU               string // set empty: no multi-GPU items
	Pin                string // the visible-devices variable; "" = chosen by GPU vendor
	ItemMarker         string // the word that starts a listing line
}

// Default returns TransformerEngine's names.
func Default() Names {
	return Names{
		ListItems:          "TE_CI_LIST_ITEMS",
		SkipCheckSupported: "TE_CI_SKIP_CHECK_SUPPORTED",
		SetupOnly:          "TE_CI_SETUP_ONLY",
		SkipSetup:          "TE_CI_SKIP_SETUP",
		Filter:             "TEST_FILTER",
		OnlyTests:          "TE_CI_ONLY_TESTS",
		JUnitPrefix:        "JUNITXML_PREFIX",
		JUnitSuffix:        "JUNITXML_SUFFIX",
		Level:              "TEST_LEVEL",
		SGPU:               "TEST_SGPU",
		MGPU:               "TEST_MGPU",
		ItemMarker:         "TE_CI_ITEM",
	}
}

// keys maps the user-facing key of each name (for --hook-var key=NAME) to its field.
func (n *Names) keys() map[string]*string {
	return map[string]*string{
		"list-items":           &n.ListItems,
		"skip-check-supported": &n.SkipCheckSupported,
		"setup-only":           &n.SetupOnly,
		"skip-setup":           &n.SkipSetup,
		"filter":               &n.Filter,
		"only-tests":           &n.OnlyTests,
		"junit-prefix":         &n.JUnitPrefix,
		"junit-suffix":         &n.JUnitSuffix,
		"level":                &n.Level,
		"sgpu":                 &n.SGPU,
		"mgpu":                 &n.MGPU,
		"pin":                  &n.Pin,
		"item-marker":          &n.ItemMarker,
	}
}

// KeyOf is the Uses key of the variable name that every listing and setup gets; "" for none.
func (n Names) KeyOf(name string, visible ...string) string {
	for _, u := range n.Uses(visible...) {
		if u.Name == name && !u.ItemsOnly {
			return u.Key
		}
	}
	return ""
}

// Set renames one variable from a "key=NAME" assignment.
func (n *Names) Set(assignment string) error {
	key, name, ok := strings.Cut(assignment, "=")
	key = strings.TrimSpace(key)
	name = strings.TrimSpace(name)
	field, known := n.keys()[key]
	if !ok || !known {
		return fmt.Errorf("hook variable %q: want KEY=NAME with KEY one of %s", assignment, strings.Join(n.Keys(), ", "))
	}
	if !ValidName(name) {
		return fmt.Errorf("hook variable %q: %q is not a valid variable name (letters, digits and _, not starting with a digit)", assignment,
			name)
	}
	if what := reserved(name); what != "" {
		return fmt.Errorf("hook variable %q: %s is %s: an item's GPU id, tag or switch there would break the commands it runs; name a "+
			"variable of the suite's own (e.g. MY_%s)", assignment, name, what, strings.ToUpper(key2name(key)))
	}
	*field = name
	return nil
}

// key2name is a key as a variable-name stem ("skip-setup" → "skip_setup").
func key2name(key string) string { return strings.ReplaceAll(key, "-", "_") }

// reserved says what reads a variable for itself (the shell, the loader, a runtime); a hook or pin variable must
// not be one (PATH=2 and nothing runs; LD_PRELOAD=<tag> loads the tag).
func reserved(name string) string {
	for _, p := range []struct{ prefix, what string }{
		{"LD_", "read by the dynamic loader"},
		{"DYLD_", "read by the dynamic loader"},
		{"LC_", "a locale setting"},
		{"BASH_FUNC_", "a function bash imports"},
		{"MALLOC_", "read by the C library's allocator"},
	} {
		if strings.HasPrefix(name, p.prefix) {
			return p.what
		}
	}
	switch name {
	case "PATH":
		return "the command search path"
	case "HOME", "USER", "LOGNAME", "PWD", "OLDPWD", "TMPDIR", "TZ", "LANG", "LANGUAGE", "TERM", "TERMINFO":
		return "part of every process's basic environment"
	case "SHELL", "IFS", "ENV", "BASH_ENV", "CDPATH", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE",
		"POSIXLY_CORRECT":
		return "read by the shell"
	case "GCONV_PATH", "GLIBC_TUNABLES", "NLSPATH", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS":
		return "read by the C library"
	case "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "NODE_OPTIONS", "PERL5LIB", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS":
		return "read by a language runtime at start"
	}
	return ""
}

// Name is the variable name of key (as Set takes it); "" for an unknown key.
func (n Names) Name(key string) string {
	if f, ok := n.keys()[key]; ok {
		return *f
	}
	return ""
}

// Keys lists the keys Set accepts.
func (n *Names) Keys() []string {
	var ks []string
	for k := range n.keys() {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ValidName reports whether s can name an environment variable.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Env is an environment as KEY=VALUE pairs.
type Env []string

// Get returns the value of key and whether it is set.
func (e Env) Get(key string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// With returns a copy of e with each "KEY=VALUE" set and each bare "KEY" removed.
func (e Env) With(kv ...string) Env {
	drop := map[string]bool{}
	for _, a := range kv {
		k, _, _ := strings.Cut(a, "=")
		drop[k] = true
	}
	out := make(Env, 0, len(e)+len(kv))
	for _, a := range e {
		k, _, _ := strings.Cut(a, "=")
		if !drop[k] {
			out = append(out, a)
		}
	}
	for _, a := range kv {
		if strings.Contains(a, "=") {
			out = append(out, a)
		}
	}
	return out
}

// Assign is "NAME=value" for each name (an item's GPU id in every visible-devices variable).
func Assign(value string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "=" + value
	}
	return out
}

// Kind is which switch a suite's commands get, single- or multi-GPU, for listing, setup and items alike,
// so one script can be two suites (TE's torch and torch-mgpu).
type Kind int

const (
	SingleGPU Kind = iota
	MultiGPU
)

// base is env with the level and k's switch, any per-purpose switch an outer environment left set removed, then sets.
func (n Names) base(env Env, level string, k Kind, sets ...string) Env {
	kind := []string{n.SGPU + "=1", n.MGPU + "="}
	if k == MultiGPU {
		kind = []string{n.SGPU + "=", n.MGPU + "=1"}
	}
	return n.AdapterEnv(env, level).With(append(kind, sets...)...)
}

// ListEnv is a listing pass's environment: the queue (this host) or, with census, what exists at this level.
func (n Names) ListEnv(env Env, level string, k Kind, census bool) Env {
	sets := []string{n.ListItems + "=1"}
	if census {
		sets = append(sets, n.SkipCheckSupported+"=1")
	}
	return n.base(env, level, k, sets...)
}

// SetupEnv is the environment of the one-time setup of a list suite.
func (n Names) SetupEnv(env Env, level string, k Kind) Env {
	return n.base(env, level, k, n.SetupOnly+"=1")
}

// ItemEnv is one item's environment; an opaque item runs its script whole, setup included.
func (n Names) ItemEnv(env Env, level string, k Kind, tag string, opaque bool) Env {
	if opaque {
		return n.base(env, level, k)
	}
	return n.base(env, level, k, n.SkipSetup+"=1", n.Filter+"="+FilterPattern(tag))
}

// VerifyEnv is a listing pass with the filter of tag, showing which call lines that item would run.
func (n Names) VerifyEnv(env Env, level string, k Kind, tag string, census bool) Env {
	return n.ListEnv(env, level, k, census).With(n.Filter + "=" + FilterPattern(tag))
}

// AdapterEnv is an adapter suite's environment (docs/adapters.md): the level, and no contract switch, as they mean
// nothing to pytest, CTest or a command line.
func (n Names) AdapterEnv(env Env, level string) Env {
	return env.With(n.ListItems, n.SkipCheckSupported, n.SetupOnly, n.SkipSetup, n.Filter, n.Level+"="+level)
}

// Use is one variable sgpu-queue sets in a suite's commands.
type Use struct {
	Name string
	// Key is the --hook-var key of a contract variable, or "also-pin", "port", "junit-file".
	Key string
	// ItemsOnly: set for items only, not for listings and setups.
	ItemsOnly bool
}

// JUnitFileVar holds a cmd item's JUnit file when JUnit is on (docs/adapters.md).
const JUnitFileVar = "SGPU_JUNIT_XML"

// Uses lists every variable sgpu-queue sets in a suite's commands, in Keys() order, then the pins, the port and the
// JUnit file. Clashes and KeyOf read this one list, so a variable added here is checked by both.
func (n Names) Uses(visible ...string) []Use {
	var out []Use
	fields := n.keys()
	for _, k := range n.Keys() {
		switch name := *fields[k]; {
		case k == "item-marker":
		case k == "pin" && name == "":
			for _, v := range visible {
				out = append(out, Use{Name: v, Key: k})
			}
		case name != "":
			out = append(out, Use{Name: name, Key: k})
		}
	}
	if n.Pin != "" && slices.Contains(visible, n.Pin) {
		for _, v := range visible {
			if v != n.Pin {
				out = append(out, Use{Name: v, Key: "also-pin"})
			}
		}
	}
	return append(out,
		Use{Name: MasterPort, Key: "port", ItemsOnly: true},
		Use{Name: JUnitFileVar, Key: "junit-file", ItemsOnly: true})
}

// Clash is one name given to two of the variables sgpu-queue sets, which would then get one value.
type Clash struct {
	Name string
	// Keys are the two uses' keys (Use.Key), in Uses order.
	Keys [2]string
}

func (c *Clash) Error() string {
	return fmt.Sprintf("%s is both the %s and the %s variable", c.Name, c.Keys[0], c.Keys[1])
}

// Clashes lists every name two of the Uses share.
func (n Names) Clashes(visible ...string) []*Clash {
	owner := map[string]string{}
	var out []*Clash
	for _, u := range n.Uses(visible...) {
		if first, ok := owner[u.Name]; ok {
			out = append(out, &Clash{Name: u.Name, Keys: [2]string{first, u.Key}})
			continue
		}
		owner[u.Name] = u.Key
	}
	return out
}
