// Package settings is the one list of a run's knobs, shared by both faces: the CLI
// reads them from flags (and SGPU_* variables), the action from its inputs, and both
// turn them into engine options here, so the two faces cannot drift apart.
package settings

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Kind says how a knob's text is read.
type Kind int

const (
	String Kind = iota
	Bool
	Number
	Duration
	Lines // several values, one per line (or repeated flag)
)

// Knob is one setting, named as the CLI flag and the action input.
type Knob struct {
	Name    string
	Kind    Kind
	Default string // the CLI's default; the action's defaults live in action.yml
	Usage   string
}

// Knobs are the settings of a run, in help order.
var Knobs = []Knob{
	{"log-dir", String, "", "log dir (default <repo-root>/test-results/logs)"},
	{"gpus", String, "", "GPU ids (0,1,2,3) or a count (4); default $HIP_VISIBLE_DEVICES, $CUDA_VISIBLE_DEVICES, else detected"},
	{"arch", String, "", "GPU arch keying the weight table, e.g. gfx942 (default detected)"},
	{"level", String, "", "test level passed as TEST_LEVEL (default $TEST_LEVEL, else 99)"},
	{"weights", String, "", "weight table (default <repo-root>/ci-weights/test_weights.<arch>.l<level>.txt)"},
	{"junit-dir", String, "", "where the merged JUnit file of each suite goes, <dir>/<label>.xml, when JUNITXML_PREFIX is set (default <repo-root>/test-results/junit)"},
	{"default-weight", Number, "999999", "estimate in seconds of an item the table has never seen"},
	{"policy", String, schedule.DefaultPolicy, "dispatch policy: " + strings.Join(schedule.Policies(), " or ") + " (planned follows a plan that beats LPT on the weights, else it is LPT)"},
	{"dry-run", Bool, "false", "phases 0–2 only: print the plan, run nothing"},
	{"container", String, "", "run every suite command inside this running container through the Docker Engine API (DOCKER_HOST or the default socket)"},
	{"container-workdir", String, "", "the repo root as seen inside that container (default: from the two containers' mounts)"},
	{"pass-env", Lines, "", "with --container: variables (globs allowed, e.g. NVTE_*) passed into the container besides the hook contract's (repeatable)"},
	{"grace", Duration, "20s", "on cancel or timeout, time between TERM and KILL of an item's processes"},
	{"pin-var", String, "", "variable that pins an item to its GPU (default by vendor: HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES)"},
	{"hook-var", Lines, "", "rename a hook variable, KEY=NAME (repeatable); keys: " + strings.Join(keys(), ", ")},
	{"item-timeout-factor", Number, "0", "kill an item running longer than this × its learned weight (rc 124); 0 = off"},
	{"item-timeout-min", Duration, "5m", "the hang deadline is never shorter"},
	{"item-timeout-max", Duration, "0", "the hang deadline is never longer, and is the deadline of unknown items (0 = none)"},
	{"retries", Number, "0", "queue a failed item again up to this many times (at the back, on another GPU)"},
	{"flaky-is-failure", Bool, "false", "an item that passed only on a rerun fails its suite"},
	{"quarantine-threshold", Number, strconv.Itoa(dispatch.DefaultQuarantine.Threshold), "consecutive fast or device-error failures that take a GPU out of the pool; 0 = off"},
}

func keys() []string {
	n := hook.Default()
	return n.Keys()
}

// Values are the knobs' texts by name; a missing or empty one takes its default.
type Values map[string]string

func (v Values) get(name string) string {
	if s := strings.TrimSpace(v[name]); s != "" {
		return s
	}
	for _, k := range Knobs {
		if k.Name == name {
			return k.Default
		}
	}
	return ""
}

// Apply checks every knob and sets it on o. Errors name the knob as flag and input
// ("--retries / retries") and say what is wanted.
func (v Values) Apply(o *engine.Options, force <-chan struct{}) error {
	var err error
	num := func(name string, min float64, integer bool) float64 {
		s := v.get(name)
		f, perr := strconv.ParseFloat(s, 64)
		switch {
		case err != nil:
		case perr != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < min || integer && f != math.Trunc(f):
			want := "a number"
			if integer {
				want = "a whole number"
			}
			err = fmt.Errorf("%s %q: want %s ≥ %g", name, s, want, min)
		}
		return f
	}
	dur := func(name string) time.Duration {
		s := v.get(name)
		if s == "0" {
			return 0
		}
		d, perr := time.ParseDuration(s)
		if err == nil && (perr != nil || d < 0) {
			err = fmt.Errorf("%s %q: want a duration such as 90s or 5m", name, s)
		}
		return d
	}
	boolean := func(name string) bool {
		s := v.get(name)
		b, perr := strconv.ParseBool(s)
		if err == nil && perr != nil {
			err = fmt.Errorf("%s %q: want true or false", name, s)
		}
		return b
	}

	o.LogDir = v.get("log-dir")
	o.GPUs = v.get("gpus")
	o.Arch = v.get("arch")
	o.Level = v.get("level")
	o.WeightsPath = v.get("weights")
	o.JUnitDir = v.get("junit-dir")
	o.DefaultWeight = num("default-weight", 0, false)
	if err == nil && o.DefaultWeight <= 0 {
		err = fmt.Errorf("default-weight %q: want a positive number of seconds", v.get("default-weight"))
	}
	o.Policy = v.get("policy")
	if !slices.Contains(schedule.Policies(), o.Policy) && err == nil {
		err = fmt.Errorf("policy %q: want %s", o.Policy, strings.Join(schedule.Policies(), " or "))
	}
	o.DryRun = boolean("dry-run")
	o.Container = v.get("container")
	o.ContainerWorkdir = v.get("container-workdir")
	o.PassEnv = splitLines(v["pass-env"])
	o.Grace = dur("grace")
	o.Force = force
	o.Timeout = dispatch.Timeout{Factor: num("item-timeout-factor", 0, false), Min: dur("item-timeout-min"), Max: dur("item-timeout-max")}
	o.Retries = int(num("retries", 0, true))
	o.FlakyIsFailure = boolean("flaky-is-failure")
	o.Quarantine = dispatch.DefaultQuarantine
	o.Quarantine.Threshold = int(num("quarantine-threshold", 0, true))
	if err != nil {
		return err
	}
	o.Hooks = hook.Default()
	for _, a := range splitLines(v["hook-var"]) {
		if err := o.Hooks.Set(a); err != nil {
			return fmt.Errorf("hook-var: %v", err)
		}
	}
	if p := v.get("pin-var"); p != "" {
		if err := o.Hooks.Set("pin=" + p); err != nil {
			return fmt.Errorf("pin-var: %v", err)
		}
	}
	return nil
}

// splitLines splits a Lines knob: one value per line (the CLI joins repeated flags
// with newlines; an action input is a YAML block).
func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
