package settings

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/weights"
)

func TestKnobTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Knobs {
		if seen[k.Name] {
			t.Errorf("knob %s listed twice", k.Name)
		}
		seen[k.Name] = true
		// Each text reads right in every form, and {name} in it is a flag (--name).
		if k.Usage == "" {
			t.Errorf("knob %s: no usage", k.Name)
		}
		for _, text := range []string{k.Usage, k.CLI, k.Empty} {
			if err := CheckText(text, func(n string) bool { _, ok := Lookup(n); return ok }); err != nil {
				t.Errorf("knob %s: %v", k.Name, err)
			}
		}
		if k.Empty != "" && k.Default != "" {
			t.Errorf("knob %s: Empty %q says what an empty default means, but the default is %q", k.Name, k.Empty, k.Default)
		}
		if k.Path && k.Kind != String && k.Kind != Lines {
			t.Errorf("knob %s: a path of kind %d", k.Name, k.Kind)
		}
		if k.Name != strings.ToLower(k.Name) || strings.ContainsAny(k.Name, " _=") {
			t.Errorf("knob %s: not a flag/input name", k.Name)
		}
		// Each knob's default, written out, is accepted.
		var o engine.Options
		if err := (Values{k.Name: k.Default}).Apply(&o, nil); err != nil {
			t.Errorf("knob %s: its default %q is refused: %v", k.Name, k.Default, err)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	var o engine.Options
	force := make(chan struct{})
	if err := (Values{}).Apply(&o, force); err != nil {
		t.Fatal(err)
	}
	want := engine.Options{
		Target: runenv.Options{
			Hooks:        hook.Default(),
			Grace:        20 * time.Second,
			Force:        force,
			ListTimeout:  10 * time.Minute,
			SetupTimeout: 2 * time.Hour,
		},
		Configs: config.Sources{Queue: "sgpu"},
		Weights: weights.Options{Default: 999999},
		Policy:  schedule.DefaultPolicy,
		Dispatch: dispatch.Policy{
			Timeout:    dispatch.Timeout{Min: 5 * time.Minute},
			Quarantine: dispatch.DefaultQuarantine,
		},
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestApplyValues(t *testing.T) {
	v := Values{
		"log-dir": " /tmp/logs ", "gpus": "0,1", "arch": "gfx942", "level": "3", "weights": "w.txt", "junit-dir": "j",
		"default-weight": "12.5", "policy": "lpt", "dry-run": "true", "container": "c1", "container-workdir": "/w",
		"pass-env": "NVTE_*\n# a comment\n\n  HF_HOME  \n",
		"grace":    "0", "list-timeout": "30s", "setup-timeout": "0",
		"item-timeout-factor": "2.5", "item-timeout-min": "90s", "item-timeout-max": "2h",
		"retries": "2", "flaky-is-failure": "1", "quarantine-threshold": "0",
		"hook-var": "filter=MY_FILTER\n# renamed\n level = LVL \n",
		"pin-var":  "ROCR_VISIBLE_DEVICES",
		"shard":    " 2/3 ", "plan": "plan.json",
		"queue": "mgpu", "mgpu-config": "ci/a.conf\nci/b c.conf\n", "port-base": "31000", "core-dumps": "true",
		"suites": " torch, jax-mgpu\tcore ",
	}
	var o engine.Options
	if err := v.Apply(&o, nil); err != nil {
		t.Fatal(err)
	}
	hooks := hook.Default()
	hooks.Filter, hooks.Level, hooks.Pin = "MY_FILTER", "LVL", "ROCR_VISIBLE_DEVICES"
	want := engine.Options{
		Target: runenv.Options{
			Level:            "3",
			Hooks:            hooks,
			Container:        "c1",
			ContainerWorkdir: "/w",
			PassEnv:          []string{"NVTE_*", "HF_HOME"},
			CoreDumps:        true,
			Grace:            0,
			ListTimeout:      30 * time.Second,
			SetupTimeout:     0,
			PortBase:         "31000",
		},
		Configs: config.Sources{Queue: "mgpu", MGPU: []string{"ci/a.conf", "ci/b c.conf"}},
		LogDir:  "/tmp/logs",
		GPUs:    "0,1",
		Arch:    "gfx942",
		Weights: weights.Options{Path: "w.txt", Default: 12.5},
		JUnit:   junit.Options{Dir: "j"},
		Policy:  "lpt",
		DryRun:  true,
		Dispatch: dispatch.Policy{
			Timeout:        dispatch.Timeout{Factor: 2.5, Min: 90 * time.Second, Max: 2 * time.Hour},
			Retries:        2,
			FlakyIsFailure: true,
			Quarantine:     dispatch.Quarantine{Threshold: 0, Fast: dispatch.DefaultQuarantine.Fast, FastUnknown: dispatch.DefaultQuarantine.FastUnknown},
		},
		Sharding: shard.Spec{Shard: 2, Shards: 3, PlanFile: "plan.json"},
		Suites:   engine.Selection{Labels: []string{"torch", "jax-mgpu", "core"}, Given: true},
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	// A pin-var given both ways: the pin-var knob wins.
	if err := (Values{"hook-var": "pin=A", "pin-var": "B"}).Apply(&o, nil); err != nil || o.Target.Hooks.Pin != "B" {
		t.Errorf("pin = %q, %v", o.Target.Hooks.Pin, err)
	}
}

// Every knob that can be wrong says which knob it is and what it wants, on one line
// (the CLI prefixes it with "--", the action with "input ").
func TestApplyErrors(t *testing.T) {
	tests := []struct {
		knob, value string
		want        string
	}{
		{"default-weight", "abc", `default-weight "abc": want a number ≥ 0`},
		{"queue", "both", `queue "both": want sgpu or mgpu`},
		{"core-dumps", "yes", `core-dumps "yes": want true or false`},
		{"default-weight", "-5", `default-weight "-5": want a number ≥ 0`},
		{"default-weight", "0", `default-weight "0": want a positive number of seconds`},
		{"default-weight", "NaN", `default-weight "NaN": want a number ≥ 0`},
		{"default-weight", "+Inf", `default-weight "+Inf": want a number ≥ 0`},
		{"policy", "fifo", `policy "fifo": want planned or lpt`},
		{"dry-run", "maybe", `dry-run "maybe": want true or false`},
		{"flaky-is-failure", "yes", `flaky-is-failure "yes": want true or false`},
		{"grace", "20", `grace "20": want a duration such as 90s or 5m`},
		{"grace", "-1s", `grace "-1s": want a duration such as 90s or 5m`},
		{"list-timeout", "10", `list-timeout "10": want a duration such as 90s or 5m`},
		{"setup-timeout", "forever", `setup-timeout "forever": want a duration such as 90s or 5m`},
		{"item-timeout-factor", "x3", `item-timeout-factor "x3": want a number ≥ 0`},
		{"item-timeout-factor", "-1", `item-timeout-factor "-1": want a number ≥ 0`},
		{"item-timeout-min", "5 minutes", `item-timeout-min "5 minutes": want a duration such as 90s or 5m`},
		{"item-timeout-max", "1d", `item-timeout-max "1d": want a duration such as 90s or 5m`},
		{"retries", "1.5", `retries "1.5": want a whole number ≥ 0`},
		{"retries", "-1", `retries "-1": want a whole number ≥ 0`},
		{"retries", "two", `retries "two": want a whole number ≥ 0`},
		{"quarantine-threshold", "Inf", `quarantine-threshold "Inf": want a whole number ≥ 0`},
		{"quarantine-threshold", "3\n4", `quarantine-threshold "3\n4": want a whole number ≥ 0`},
		{"hook-var", "filter", `hook-var: hook variable "filter": want KEY=NAME with KEY one of `},
		{"hook-var", "nosuchkey=X", `hook-var: hook variable "nosuchkey=X": want KEY=NAME with KEY one of `},
		{"hook-var", "filter=1BAD", `hook-var: hook variable "filter=1BAD": "1BAD" is not a valid variable name`},
		{"shard", "3", `shard "3": want I/K, shard I of K (1 ≤ I ≤ K ≤ 256), e.g. 2/3`},
		{"shard", "4/3", `shard "4/3": want I/K`},
		{"shard", "0/3", `shard "0/3": want I/K`},
		{"shard", "1/257", `shard "1/257": want I/K`},
		{"shard", "a/b", `shard "a/b": want I/K`},
		{"shard", "1/3/5", `shard "1/3/5": want I/K`},
		{"pin-var", "HIP-VISIBLE", `pin-var "HIP-VISIBLE": hook variable "pin=HIP-VISIBLE": "HIP-VISIBLE" is not a valid variable name`},
	}
	for _, tt := range tests {
		t.Run(tt.knob+"="+tt.value, func(t *testing.T) {
			var o engine.Options
			err := (Values{tt.knob: tt.value}).Apply(&o, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q\nwant prefix %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if !strings.HasPrefix(err.Error(), tt.knob+" ") && !strings.HasPrefix(err.Error(), tt.knob+":") {
				t.Errorf("error %q does not start with the knob's name", err)
			}
		})
	}
}

// Hook and pin variables that share a name are refused, one line each, on the knob
// that gave the name, naming both options (hook.Names.Clashes): the items would
// otherwise get their GPU id as their filter, or run the listing.
func TestApplyRefusesClashingVariables(t *testing.T) {
	tests := []struct {
		values Values
		want   []string
	}{
		{Values{"pin-var": "TEST_FILTER"}, []string{`--pin-var "TEST_FILTER": TEST_FILTER is both the filter and the pin variable ` +
			`(hook-var filter= (its default) and pin-var): each command would get one value for both; give them different names`}},
		{Values{"pin-var": "TEST_LEVEL"}, []string{`--pin-var "TEST_LEVEL": TEST_LEVEL is both the level and the pin variable ` +
			`(hook-var level= (its default) and pin-var): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "filter=TE_CI_LIST_ITEMS"}, []string{`--hook-var: TE_CI_LIST_ITEMS is both the filter and the list-items variable ` +
			`(hook-var filter= and hook-var list-items= (its default)): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "level=HIP_VISIBLE_DEVICES"}, []string{`--hook-var: HIP_VISIBLE_DEVICES is both the level and the pin variable ` +
			`(hook-var level= and pin-var (its default, the vendor's HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES)): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "level=MY_PIN", "pin-var": "MY_PIN"}, []string{`--pin-var "MY_PIN": MY_PIN is both the level and the pin variable ` +
			`(hook-var level= and pin-var): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "filter=MY_FILTER", "pin-var": "TEST_FILTER"}, nil}, // moved apart: fine
		// The variables sgpu-queue sets that no option renames (hook.Names.Uses).
		{Values{"pin-var": "PET_MASTER_PORT"}, []string{`--pin-var "PET_MASTER_PORT": PET_MASTER_PORT is both the pin and the port variable ` +
			`(pin-var and PET_MASTER_PORT, which sgpu-queue sets to each item's port): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "level=PET_MASTER_PORT"}, []string{`--hook-var: PET_MASTER_PORT is both the level and the port variable ` +
			`(hook-var level= and PET_MASTER_PORT, which sgpu-queue sets to each item's port): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "junit-prefix=SGPU_JUNIT_XML"}, []string{`--hook-var: SGPU_JUNIT_XML is both the junit-prefix and the junit-file variable ` +
			`(hook-var junit-prefix= and SGPU_JUNIT_XML, which sgpu-queue sets to a cmd item's JUnit file): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "level=CUDA_VISIBLE_DEVICES", "pin-var": "HIP_VISIBLE_DEVICES"}, []string{`--hook-var: CUDA_VISIBLE_DEVICES is both the level and the also-pin variable ` +
			`(hook-var level= and the other vendor's visible-devices variable, which sgpu-queue sets to the item's GPUs with the pin): each command would get one value for both; give them different names`}},
		{Values{"hook-var": "level=CUDA_VISIBLE_DEVICES", "pin-var": "MY_PIN"}, nil}, // a pin of its own: the vendors' are not set
	}
	for _, tt := range tests {
		var o engine.Options
		err := tt.values.Apply(&o, nil)
		var got []string
		if err != nil {
			got = strings.Split(Prefixed(err, "--").Error(), "\n")
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.values, diff)
		}
	}
}

// With several bad knobs, every one is reported, one line each in table order, and
// each line takes the face's prefix.
func TestApplyReportsEveryError(t *testing.T) {
	var o engine.Options
	err := (Values{"retries": "x", "grace": "y", "default-weight": "z", "hook-var": "a\nfilter=1X"}).Apply(&o, nil)
	if err == nil {
		t.Fatal("accepted")
	}
	got := strings.Split(Prefixed(err, "--").Error(), "\n")
	want := []string{
		`--default-weight "z": want a number ≥ 0`,
		`--grace "y": want a duration such as 90s or 5m`,
		`--hook-var: hook variable "a": want KEY=NAME with KEY one of ` + strings.Join(keys(), ", "),
		`--hook-var: hook variable "filter=1X": "1X" is not a valid variable name (letters, digits and _, not starting with a digit)`,
		`--retries "x": want a whole number ≥ 0`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	var se *Error
	if !errors.As(err, &se) || se.Knob != "default-weight" {
		t.Errorf("errors.As(*Error) = %+v", se)
	}
}

// Level, gpus and port-base are checked with the other knobs, each named as the
// face names it (--gpus here; the action's own test has input gpus).
func TestApplyChecksLevelGPUsPortBase(t *testing.T) {
	var o engine.Options
	err := Values{"level": "1 2", "gpus": "0", "port-base": "x", "retries": "-1"}.Apply(&o, nil)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"--gpus 0: a count must be at least 1 (to use GPU 0 alone, write --gpus 0, with a trailing comma)",
		`--level "1 2": want a test level such as 1, 2 or 3`,
		`--port-base "x": want a port number from 1 to 65535, the first of the items' PET_MASTER_PORT ports (default 29600)`,
		`--retries "-1": want a whole number ≥ 0`,
	}
	if diff := cmp.Diff(want, strings.Split(Prefixed(err, "--").Error(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
