// Package settings is the one list of a run's knobs, shared by the CLI and the action so they cannot drift: each
// knob's name, default, description and parser live here, and go generate writes action.yml and docs/action.md.
package settings

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/weights"
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

// Knob is one setting, named as the CLI flag and the action input; --help, action.yml and docs/action.md are
// written from its texts (docs/contributing.md).
type Knob struct {
	Name string
	Kind Kind
	// Default is the default of both faces, written out; action.yml declares it.
	Default string
	// Usage says what the knob does in Text's markup, without a final period (Describe adds it).
	Usage string
	// Empty says what an empty Default means ("detected"), where the faces work it out.
	Empty string
	// CLI and Action are told to one face's users only.
	CLI, Action string
	// Path: the action reads the text as a workspace-relative path (paths, for Lines).
	Path bool
	// set parses the knob's text into the options; its error says what is wanted.
	set func(o *engine.Options, s string) error
}

// Knobs are the settings in action.yml's order; hook-var comes before pin-var so a pin-var wins over a "pin=" rename.
var Knobs = []Knob{
	{
		Name:  "log-dir",
		Kind:  String,
		Usage: "the log dir: the run's logs, records and report (docs/files.md)",
		Empty: "`test-results/logs` under the repo root",
		Path:  true,
		set:   func(o *engine.Options, s string) error { o.LogDir = s; return nil },
	},
	{
		Name:    "log-dir-reuse",
		Kind:    Bool,
		Default: "false",
		Usage: "use a log dir that holds files no sgpu-queue run wrote (e.g. the repo root itself): write beside them, replacing only " +
			"files of the run's own names, deleting none; without it such a log dir is refused (exit 2), while a log dir of an earlier " +
			"run is always reused and only that run's files are deleted (docs/files.md#what-a-run-owns)",
		set: func(o *engine.Options, s string) (err error) { o.LogDirReuse, err = boolean(s); return err },
	},
	{
		Name:  "gpus",
		Kind:  String,
		Usage: "GPU ids (`0,1,2,3`) or a count (`4`)",
		Empty: "`$HIP_VISIBLE_DEVICES`, else `$CUDA_VISIBLE_DEVICES`, else detected where the commands run",
		set: func(o *engine.Options, s string) error {
			o.GPUs = s
			if strings.TrimSpace(s) == "" {
				return nil
			}
			_, err := gpu.ParseSpecAs(o.Face, s) // as phase 0 reads it (gpu.Detect), checked with every other input
			return named(err)
		},
	},
	{
		Name:  "arch",
		Kind:  String,
		Usage: "GPU arch keying the weight table (`gfx942`, `sm_90`)",
		Empty: "detected",
		set:   func(o *engine.Options, s string) error { o.Arch = s; return nil },
	},
	{
		Name:  "level",
		Kind:  String,
		Usage: "test level, passed to the suites as `TEST_LEVEL`",
		Empty: "`$TEST_LEVEL`, else `99`",
		set: func(o *engine.Options, s string) error {
			o.Target.Level = s
			if strings.TrimSpace(s) == "" {
				return nil
			}
			_, err := runenv.Level(s, "") // as the run reads it (runenv.Settle)
			return err
		},
	},
	{
		Name:   "weights",
		Kind:   String,
		Usage:  "the weight table, the items' learned durations (docs/weights.md)",
		Action: "the Actions cache is restored into it and saved from it",
		Empty:  "`ci-weights/test_weights.<arch>.l<level>.txt` under the repo root",
		Path:   true,
		set:    func(o *engine.Options, s string) error { o.Weights.Path = s; return nil },
	},
	{
		Name: "junit-dir",
		Kind: String,
		Usage: "where the merged JUnit file of each suite goes, `<junit-dir>/<label>.xml`; a file there that sgpu-queue did not write " +
			"is left as it is, with a warning (docs/files.md#merged-junit-and-its-manifest)",
		CLI:    "each item's own file goes under the log dir's `junit/<label>/` when the environment sets no `JUNITXML_PREFIX`",
		Action: "each item's own file goes to `test-results/<label>/<tag>.xml` under the repo root (TE's layout) when the step sets no `JUNITXML_PREFIX`",
		Empty:  "`test-results/junit` under the repo root",
		Path:   true,
		set:    func(o *engine.Options, s string) error { o.JUnit.Dir = s; return nil },
	},
	{
		Name:    "default-weight",
		Kind:    Number,
		Default: "999999",
		Usage: "estimate in seconds of an item the weight table has never seen and no prior covers, so that it runs first " +
			"(docs/weights.md#priors-for-unknown-items)",
		set: func(o *engine.Options, s string) (err error) {
			o.Weights.Default, err = number(s, 0, false)
			if err == nil && o.Weights.Default <= 0 {
				err = errors.New("want a positive number of seconds")
			}
			return err
		},
	},
	{
		Name:    "policy",
		Kind:    String,
		Default: schedule.DefaultPolicy,
		Usage: "dispatch policy: `" + strings.Join(schedule.Policies(), "` or `") + "`; planned follows a plan that beats " +
			"longest-first on the learned weights, else it is longest-first (docs/performance.md#planning)",
		set: func(o *engine.Options, s string) error {
			o.Policy = s
			if !slices.Contains(schedule.Policies(), s) {
				return fmt.Errorf("want %s", strings.Join(schedule.Policies(), " or "))
			}
			return nil
		},
	},
	{
		Name: "shard",
		Kind: String,
		Usage: "run one shard of a job matrix, `I/K` (e.g. `2/3`): the items {plan} gives shard I, and the items the plan does not know " +
			"by the hash of their key; nothing is learned, the merge of the shards learns from every one (docs/runners.md)",
		Action: "in mode `run`, e.g. `matrix.shard` of the plan job's `matrix` output; nothing is saved to the cache either",
		set: func(o *engine.Options, s string) (err error) {
			o.Sharding.Shard, o.Sharding.Shards, err = shardSpec(s)
			return err
		},
	},
	{
		Name:   "plan",
		Kind:   String,
		Usage:  "with {shard}: the plan file of the job matrix (without one, every item goes by the hash of its key)",
		CLI:    "`sgpu-queue plan` writes it",
		Action: "mode `plan` writes it there, by default to `plan.json`",
		Path:   true,
		set:    func(o *engine.Options, s string) error { o.Sharding.PlanFile = s; return nil },
	},
	{
		Name:    "dry-run",
		Kind:    Bool,
		Default: "false",
		Usage:   "print the plan and run nothing (phases 0–2 only)",
		set:     func(o *engine.Options, s string) (err error) { o.DryRun, err = boolean(s); return err },
	},
	{
		Name: "container",
		Kind: String,
		Usage: "run every suite command inside this running container, through the Docker Engine API (`DOCKER_HOST` or the " +
			"default socket)",
		Action: "the job container (its id: `job.container.id` in an expression of your workflow) or one an earlier step started with " +
			"the GPUs; empty, the commands run in the action's own container, which has no GPU (docs/action.md#a-workflow-in-tes-shape)",
		set: func(o *engine.Options, s string) error { o.Target.Container = s; return nil },
	},
	{
		Name:  "container-workdir",
		Kind:  String,
		Usage: "the repo root as seen inside that container",
		Empty: "from the two containers' mounts",
		set:   func(o *engine.Options, s string) error { o.Target.ContainerWorkdir = s; return nil },
	},
	{
		Name: "pass-env",
		Kind: Lines,
		Usage: "with {container}: variables passed into the container besides the hook contract's, names or globs (`HF_TOKEN`, " +
			"`NVTE_*`); its commands otherwise see the container's own environment, so a secret reaches the tests only through it",
		set: func(o *engine.Options, s string) error { o.Target.PassEnv = splitLines(s); return nil },
	},
	{
		Name:    "grace",
		Kind:    Duration,
		Default: "20s",
		Usage:   "on cancel or timeout, time between TERM and KILL of a command's processes (`0` = none: KILL at once)",
		set:     func(o *engine.Options, s string) (err error) { o.Target.Grace, err = duration(s); return err },
	},
	{
		Name:    "list-timeout",
		Kind:    Duration,
		Default: "10m",
		Usage: "stop a suite's listing pass that runs longer than this: its process tree is killed and the run stops, naming the " +
			"suite with the tail of its output; `0` = none",
		set: func(o *engine.Options, s string) (err error) { o.Target.ListTimeout, err = duration(s); return err },
	},
	{
		Name:    "setup-timeout",
		Kind:    Duration,
		Default: "2h",
		Usage:   "stop a suite's one-time setup (pip installs, a JIT prebuild) that runs longer than this, likewise; `0` = none",
		set:     func(o *engine.Options, s string) (err error) { o.Target.SetupTimeout, err = duration(s); return err },
	},
	{
		Name: "hook-var",
		Kind: Lines,
		Usage: "rename a hook variable, `KEY=NAME` (e.g. `filter=MY_TEST_FILTER`), KEY one of " + strings.Join(keys(), ", ") +
			" (docs/hooks.md#renaming-the-variables)",
		set: func(o *engine.Options, s string) error {
			o.Target.Hooks = hook.Default()
			var errs []error
			for _, a := range splitLines(s) {
				errs = append(errs, o.Target.Hooks.Set(a))
			}
			return errors.Join(errs...)
		},
	},
	{
		Name:  "pin-var",
		Kind:  String,
		Usage: "variable that pins an item to its GPU",
		Empty: "the vendor's, `HIP_VISIBLE_DEVICES` or `CUDA_VISIBLE_DEVICES`",
		set: func(o *engine.Options, s string) error {
			if s == "" {
				return nil
			}
			return o.Target.Hooks.Set("pin=" + s)
		},
	},
	{
		Name:    "queue",
		Kind:    String,
		Default: config.QueueSGPU,
		Usage: "TE's queue the configs are read as: `sgpu` (`TEST_SGPU=1`; an item takes one GPU unless it declares more) or `mgpu` " +
			"(`TEST_MGPU=1`; an item that declares no width takes the whole pool), docs/hooks.md#queues-sgpu-and-mgpu",
		set: func(o *engine.Options, s string) error {
			o.Configs.Queue = s
			if s != config.QueueSGPU && s != config.QueueMGPU {
				return fmt.Errorf("want %s or %s", config.QueueSGPU, config.QueueMGPU)
			}
			return nil
		},
	},
	{
		Name:  "mgpu-config",
		Kind:  Lines,
		Usage: "more configs, read as TE's mGPU queue in the same run as the others: one queue for both",
		Path:  true,
		set:   func(o *engine.Options, s string) error { o.Configs.MGPU = splitLines(s); return nil },
	},
	{
		Name: "suites",
		Kind: String,
		Usage: "run only these suites, labels separated by spaces or commas (e.g. the scope job's output); the others pass without " +
			"running (`not run: not selected`, docs/config.md#selecting-suites)",
		CLI:   "{suites} '' selects none",
		Empty: "`$TE_CI_SUITES` when set, where empty selects none; else every suite",
		set: func(o *engine.Options, s string) error {
			if s != "" {
				o.Suites.Labels, o.Suites.Given = engine.SuiteNames(s), true
			}
			return nil
		},
	},
	{
		Name: "port-base",
		Kind: String,
		Usage: "each item gets `PET_MASTER_PORT` = this + its first GPU id, so torchrun items running at once never share a rendezvous " +
			"port",
		Empty: "`$TE_CI_PORT_BASE`, else `29600`",
		set: func(o *engine.Options, s string) error {
			o.Target.PortBase = s
			if strings.TrimSpace(s) == "" {
				return nil
			}
			_, err := hook.ParsePortBase(s) // as phase 0 reads it (hook.PortBase)
			return err
		},
	},
	{
		Name: "env-script",
		Kind: String,
		Usage: "a shell script run once where the commands run (inside {container} when set), from the repo root, before anything " +
			"else, e.g. TE's `DIR=$PWD/ci; . ci/_utils.sh`: every variable it exports goes to every command of the run, as to the " +
			"items of a queue script that sources it; its first line may name the shell (`#!/bin/bash`; default `sh`), and its " +
			"failure stops the run (docs/hooks.md#the-environment-of-every-command)",
		set: func(o *engine.Options, s string) error { o.Target.EnvScript = s; return nil },
	},
	{
		Name: "before",
		Kind: String,
		Usage: "a command run once before the suites' setups, pinned to the first GPU (TE's CK JIT prebuild), from the repo root " +
			"where the commands run, written as a config line's words (shell quoting, nothing expanded); its failure stops the run " +
			"as a failed setup does (docs/hooks.md#once-per-run)",
		set: func(o *engine.Options, s string) (err error) { o.Once.Before, err = onceWords(s); return err },
	},
	{
		Name: "after",
		Kind: String,
		Usage: "a command run once the queue has drained (TE's CK JIT drift check), written like {before}; its output goes to the " +
			"console and its own log, and its failure is a warning, never the verdict",
		set: func(o *engine.Options, s string) (err error) { o.Once.After, err = onceWords(s); return err },
	},
	{
		Name: "setup-env",
		Kind: Lines,
		Usage: "`NAME=VALUE` given to every list suite's setup, e.g. `TE_CI_SKIP_CK_JIT=1` once {before} built the cache; a " +
			"variable sgpu-queue sets itself (a hook variable, the GPU pin) is refused",
		set: func(o *engine.Options, s string) error {
			o.Once.SetupEnv = splitLines(s) // after hook-var and pin-var: their names are settled
			return errors.Join(engine.SetupEnvProblems(o.Target.Hooks, o.Once.SetupEnv)...)
		},
	},
	{
		Name: "junit-optional",
		Kind: Lines,
		Usage: "items whose re-entry writes no JUnit file (TE's `torch/benchmark` runs a plain script), judged by their exit code " +
			"alone instead of failing as `no-run`: weight keys, `label/tag`, globs allowed, `*` across `/` too (`torch/*` is every " +
			"item of suite `torch`); a pattern matching no item is a warning (docs/outcomes.md)",
		set: func(o *engine.Options, s string) error {
			o.JUnit.Optional = splitLines(s)
			var errs []error
			for _, p := range o.JUnit.Optional {
				if _, err := weights.ParseKeyPattern(p); err != nil {
					errs = append(errs, fmt.Errorf("%q: not a glob (%w)", p, err))
				}
			}
			return errors.Join(errs...)
		},
	},
	{
		Name:    "core-dumps",
		Kind:    Bool,
		Default: "false",
		Usage: "let the commands it starts write core files; without it every command runs with `RLIMIT_CORE` 0, as under TE's " +
			"`ulimit -c 0`, so a crashing test puts no core into the uploaded logs (docs/hooks.md#core-dumps)",
		set: func(o *engine.Options, s string) (err error) { o.Target.CoreDumps, err = boolean(s); return err },
	},
	{
		Name:    "full",
		Kind:    Bool,
		Default: "false",
		Usage: "run every item, even on a re-run whose last attempt left a list of what failed (`ci-rerun/`), which would run only " +
			"that (docs/reruns.md)",
		set: func(o *engine.Options, s string) (err error) { o.Full, err = boolean(s); return err },
	},
	{
		Name:    "item-timeout-factor",
		Kind:    Number,
		Default: "0",
		Usage: "kill an item running longer than this × its learned weight (rc 124), the deadline kept between " +
			"{item-timeout-min} and {item-timeout-max}; `0` = off",
		set: func(o *engine.Options, s string) (err error) {
			o.Dispatch.Timeout.Factor, err = number(s, 0, false)
			return err
		},
	},
	{
		Name:    "item-timeout-min",
		Kind:    Duration,
		Default: "5m",
		Usage:   "the hang deadline is never shorter than this",
		set:     func(o *engine.Options, s string) (err error) { o.Dispatch.Timeout.Min, err = duration(s); return err },
	},
	{
		Name:    "item-timeout-max",
		Kind:    Duration,
		Default: "0",
		Usage:   "the hang deadline is never longer than this, and it is the deadline of an item the weight table does not know; `0` = none",
		set:     func(o *engine.Options, s string) (err error) { o.Dispatch.Timeout.Max, err = duration(s); return err },
	},
	{
		Name:    "retries",
		Kind:    Number,
		Default: "0",
		Usage:   "queue a failed item again up to this many times (at the back, on another GPU)",
		set: func(o *engine.Options, s string) error {
			n, err := number(s, 0, true)
			o.Dispatch.Retries = int(n)
			return err
		},
	},
	{
		Name:    "flaky-is-failure",
		Kind:    Bool,
		Default: "false",
		Usage:   "an item that passed only on a rerun fails its suite",
		set:     func(o *engine.Options, s string) (err error) { o.Dispatch.FlakyIsFailure, err = boolean(s); return err },
	},
	{
		Name:    "quarantine-threshold",
		Kind:    Number,
		Default: strconv.Itoa(dispatch.DefaultQuarantine.Threshold),
		Usage: "consecutive fast or device-error failures that take a GPU out of the pool; `0` = off " +
			"(docs/outcomes.md#quarantine-does-the-failure-follow-the-item-or-the-gpu)",
		set: func(o *engine.Options, s string) error {
			n, err := number(s, 0, true)
			o.Dispatch.Quarantine = dispatch.DefaultQuarantine
			o.Dispatch.Quarantine.Threshold = int(n)
			return err
		},
	},
}

func keys() []string {
	n := hook.Default()
	return n.Keys()
}

// Lookup returns the knob of that name.
func Lookup(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Values are the knobs' texts by name; a missing or empty one takes its default.
type Values map[string]string

// Error is one refused knob: "retries "x": want a whole number ≥ 0"; the faces add their prefix.
type Error struct {
	Knob, Value string
	Err         error
	// Named: Err names the knob as its face does (gpu.ParseSpecAs), so no prefix is added.
	Named bool
}

// selfNamed marks a knob's error that names the knob itself (Error.Named).
type selfNamed struct{ error }

func (e selfNamed) Unwrap() error { return e.error }

// named marks err as naming its knob itself; nil stays nil.
func named(err error) error {
	if err == nil {
		return nil
	}
	return selfNamed{err}
}

func (e *Error) Error() string {
	if e.Named {
		return e.Err.Error()
	}
	if e.Kind() == Lines {
		return fmt.Sprintf("%s: %v", e.Knob, e.Err)
	}
	return fmt.Sprintf("%s %q: %v", e.Knob, e.Value, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Kind is the kind of the knob that was refused.
func (e *Error) Kind() Kind {
	k, _ := Lookup(e.Knob)
	return k.Kind
}

// Apply parses every knob into o, reporting every refused one at once in table order (force: a second cancel).
func (v Values) Apply(o *engine.Options, force <-chan struct{}) error {
	o.Target.Force = force
	var errs []error
	hooksOK := true
	for _, k := range Knobs {
		s := strings.TrimSpace(v[k.Name])
		if s == "" {
			s = k.Default
		}
		if err := k.set(o, s); err != nil {
			hooksOK = hooksOK && k.Name != "hook-var" && k.Name != "pin-var"
			var sn selfNamed
			if errors.As(err, &sn) {
				errs = append(errs, &Error{Knob: k.Name, Value: s, Err: sn.error, Named: true})
				continue
			}
			for _, e := range split(err) {
				errs = append(errs, &Error{Knob: k.Name, Value: s, Err: e})
			}
		}
	}
	if hooksOK {
		errs = append(errs, v.clashes(o.Target.Hooks)...)
	}
	return errors.Join(errs...)
}

// Plan is the request of a plan over shards runners, its knobs read as the shard jobs will read them: the queues, the
// GPUs of each runner (needed: a plan job has none to detect) and the level, hook-var's rename included. Every bad one
// is an error line of its own; the caller adds the configs.
func (v Values) Plan(face optname.Face, shards string, environ []string) (shard.Request, error) {
	o := engine.Options{Face: face, Target: runenv.Options{Env: environ}}
	errs := []error{Prefixed(v.Apply(&o, nil), face.Name(""))} // "--" or "input "
	req := shard.Request{Face: face, Configs: o.Configs, Arch: strings.TrimSpace(o.Arch), WeightsPath: strings.TrimSpace(o.Weights.Path)}
	var err error
	req.Shards, err = Count(face, "shards", shards, shard.MaxShards, "runners")
	if strings.TrimSpace(shards) == "" {
		err = fmt.Errorf("no %s given: say how many runners to split the items over, e.g. %s", face.Name("shards"), face.Set("shards", "3"))
	}
	errs = append(errs, err)
	if strings.TrimSpace(o.GPUs) == "" {
		errs = append(errs, fmt.Errorf("no %s given: say how many GPUs each runner has, e.g. %s", face.Name("gpus"), face.Set("gpus", "8")))
	} else if spec, err := gpu.ParseSpecAs(face, o.GPUs); err == nil {
		req.GPUs = max(spec.Count, len(spec.IDs))
	}
	req.Level, err = o.Target.SettledLevel(face)
	if strings.TrimSpace(o.Target.Level) == "" {
		errs = append(errs, err) // a bad given level is Apply's
	}
	return req, errors.Join(errs...)
}

// Count reads a whole number of what, from 1 to most, given to option.
func Count(face optname.Face, option, s string, most int, what string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > most {
		return 0, fmt.Errorf("%s %q: want a whole number of %s from 1 to %d", face.Name(option), s, what, most)
	}
	return n, nil
}

// clashes refuses hook and pin variables sharing a name with each other or ours (hook.Names.Clashes), on the knob
// that gave the name.
func (v Values) clashes(n hook.Names) []error {
	pinVar := strings.TrimSpace(v["pin-var"])
	def := hook.Default()
	option := func(key string) string {
		switch {
		case key == "pin" && pinVar != "":
			return "pin-var"
		case key == "pin" && n.Pin == "":
			return "pin-var (its default, the vendor's " + gpu.HIPVisible + " or " + gpu.CUDAVisible + ")"
		case key == "also-pin":
			return "the other vendor's visible-devices variable, which sgpu-queue sets to the item's GPUs with the pin"
		case key == "port":
			return hook.MasterPort + ", which sgpu-queue sets to each item's port"
		case key == "junit-file":
			return hook.JUnitFileVar + ", which sgpu-queue sets to a cmd item's JUnit file"
		}
		o := "hook-var " + key + "="
		if def.Name(key) == n.Name(key) {
			o += " (its default)"
		}
		return o
	}
	var errs []error
	for _, c := range n.Clashes(gpu.HIPVisible, gpu.CUDAVisible) {
		knob, value := "hook-var", ""
		if slices.Contains(c.Keys[:], "pin") && pinVar != "" {
			knob, value = "pin-var", pinVar
		}
		errs = append(errs, &Error{Knob: knob, Value: value, Err: fmt.Errorf("%w (%s and %s): each command would get one value for both; give "+
			"them different names",
			c, option(c.Keys[0]), option(c.Keys[1]))})
	}
	return errs
}

// Prefixed returns err with each line's knob prefixed ("--" for the CLI, "input " for the action).
func Prefixed(err error, prefix string) error {
	var out []error
	for _, e := range split(err) {
		var se *Error
		if errors.As(e, &se) && se.Named {
			out = append(out, e)
			continue
		}
		out = append(out, fmt.Errorf("%s%w", prefix, e))
	}
	return errors.Join(out...)
}

// split flattens an errors.Join tree into its leaves.
func split(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, split(e)...)
		}
		return out
	}
	return []error{err}
}

// onceWords splits a --before/--after command as a config line is split.
func onceWords(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	w, err := config.SplitFields(s)
	if err != nil {
		return nil, err
	}
	if len(w) == 0 {
		return nil, errors.New("want a command and its arguments")
	}
	return w, nil
}

// shardSpec reads "I/K" (1 ≤ I ≤ K ≤ shard.MaxShards); "" is no shard.
func shardSpec(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	i, k, ok := strings.Cut(s, "/")
	n, err1 := strconv.Atoi(strings.TrimSpace(i))
	m, err2 := strconv.Atoi(strings.TrimSpace(k))
	if !ok || err1 != nil || err2 != nil || n < 1 || n > m || m > shard.MaxShards {
		return 0, 0, fmt.Errorf("want I/K, shard I of K (1 ≤ I ≤ K ≤ %d), e.g. 2/3", shard.MaxShards)
	}
	return n, m, nil
}

func number(s string, min float64, integer bool) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < min || integer && f != math.Trunc(f) {
		if integer {
			return 0, fmt.Errorf("want a whole number ≥ %g", min)
		}
		return 0, fmt.Errorf("want a number ≥ %g", min)
	}
	return f, nil
}

func duration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("want a duration such as 90s or 5m")
	}
	return d, nil
}

func boolean(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

// splitLines splits a Lines knob: one value per line (joined CLI flags, or a YAML block).
func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
