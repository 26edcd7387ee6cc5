package action

//go:generate go run ./gen ../..

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/manifest"
	"github.com/rocm/sgpu-queue/internal/settings"
)

// Inputs are the action's inputs in the order action.yml and docs/action.md list
// them: its own, the run's knobs (settings.Knobs) among them.
func Inputs() []settings.Knob { return slices.Concat(ownFirst, settings.Knobs, ownLast) }

// ownFirst and ownLast are the action's own inputs, before and after the knobs.
var ownFirst = []settings.Knob{
	{
		Name: "config",
		Kind: settings.Lines,
		Usage: "suite config file(s), one suite per line, `<label> <logfile> <mode>[,options] <command> [args...]`, single- and " +
			"multi-GPU suites run as one queue (docs/config.md); required unless {report-from} is set",
		Path: true,
	},
	{
		Name:  "repo-root",
		Usage: "the directory the config's commands are relative to",
		Empty: "the workspace",
		Path:  true,
	},
}

var ownLast = []settings.Knob{
	{
		Name:    "mode",
		Default: modeRun,
		Usage: "`plan`: split the items over a job matrix (outputs `matrix` and `plan`; no GPU needed); `run`: run the suites, or " +
			"with {shard} one shard of the matrix; `merge`: merge the shards' log dirs ({shard-log-dirs}) into one verdict, report " +
			"and weight table, and save it (docs/runners.md)",
	},
	{
		Name:  "shards",
		Usage: "in mode `plan`: the number of runners (shards) to split the items over",
	},
	{
		Name:  "shard-log-dirs",
		Kind:  settings.Lines,
		Usage: "in mode `merge`: the shards' log dirs (e.g. `shards/*/logs`)",
		Path:  true,
	},
	{
		Name: "allow-mixed",
		Usage: "in mode `merge`: merge shards that ran different plans or configs, with a warning for each difference, instead of " +
			"refusing them (an item one shard listed and none ran still fails, never ran)",
		Empty: "`false`",
	},
	{
		Name: "report-from",
		Usage: "run nothing: publish the report of the finished run whose log dir this is, e.g. downloaded in a `workflow_run` job " +
			"publishing for a fork's pull request (docs/action.md#pull-requests-from-forks)",
		Path: true,
	},
	{
		Name:    "publish",
		Default: "summary",
		Usage: "where the report goes besides the log dir: any of `summary`, `check`, `comment` (space or comma separated), or `none` " +
			"(no summary, no API call); `check` needs `checks: write`, `comment` `pull-requests: write` " +
			"(docs/action.md#what-appears-on-the-pr)",
	},
	{
		Name:  "check-name",
		Usage: "name of the check run, and key of the sticky PR comment (one per name)",
		Empty: "`sgpu-queue (<job>, <matrix values>)`, so each matrix leg has its own",
	},
	{
		Name:    "matrix",
		Default: "${{ toJSON(matrix) }}",
		Usage: "the leg's matrix values, for the default {check-name} and the cache keys (a step cannot read its job's display " +
			"name); leave the default",
	},
	{
		Name: "commit",
		Usage: "commit the check run goes on: a `workflow_run` job publishing for a fork's pull request passes " +
			"`github.event.workflow_run.head_sha` (docs/action.md#pull-requests-from-forks)",
		Empty: "the pull request's head, else `GITHUB_SHA`",
	},
	{
		Name: "pr-number",
		Usage: "pull request the comment goes on: a `workflow_run` job publishing for a fork's pull request passes the number its " +
			"tests' workflow saved",
		Empty: "from the event",
	},
	{
		Name:    "github-token",
		Default: "${{ github.token }}",
		Usage:   "token for the check run and the PR comment (masked, never printed)",
	},
	{
		Name:    "cache-key-prefix",
		Default: "sgpu-weights",
		Usage: "Actions cache key prefix: the weight table is restored from `<prefix>-<arch>-l<level>-*`, else `<prefix>-<arch>-*` " +
			"(another level's table), and saved as `<prefix>-<arch>-l<level>-<run_id>-<run_attempt>-<leg>`; the re-run state " +
			"and the base branch's record are kept under it too (docs/weights.md#the-actions-cache)",
	},
}

// Output is one output of the action, described once: action.yml's outputs and
// docs/action.md's table are written from it (go generate ./...).
type Output struct {
	Name, Usage string // Usage in settings.Text's markup
	Path        bool   // a path relative to the workspace
}

func (o Output) describe(f settings.Form) string {
	return settings.Knob{Usage: o.Usage, Path: o.Path}.Describe(f)
}

// Outputs the action sets; action.yml cannot declare an output per suite.
var Outputs = []Output{
	{Name: "result", Usage: "`success` or `failure`"},
	{
		Name: "exit-code",
		Usage: "the step's exit code: 0; the largest failing item's (an item's 2 or 70 counts as 1); 1 when a suite's listing or " +
			"setup failed; 2 for a config or input error, or a log dir it may not use; 70 for an internal error; 130 when cancelled " +
			"with no failed item (docs/exit-codes.md)",
	},
	{
		Name: "suites",
		Usage: "JSON object: label → `{\"rc\", \"items\", \"failed\", \"flaky\", \"seconds\"}` (`seconds`: its attempts' wall " +
			"seconds, each once however many GPUs it took); gate with `fromJSON(steps.<id>.outputs.suites).torch.rc`",
	},
	{Name: "failed-suites", Usage: "JSON array of the labels of the failed suites"},
	{Name: "failed-items", Usage: "JSON array of the failed items as `<label>/<tag>` (the label alone for an opaque suite)"},
	{Name: "flaky-items", Usage: "JSON array of the items that passed only on a rerun"},
	{
		Name: "tests",
		Usage: "JSON: the tests by how they ended, from the merged JUnit, `{\"total\", \"passed\", \"failed\", \"errored\", " +
			"\"skipped\", \"flaky\", \"unfinished\", \"suites\": {label: the same counts}}` (`errored` counts the `unfinished` " +
			"tests an item died in, `passed` the `flaky` ones), and on a pull request whose base branch left a record `\"base\": " +
			"{\"ref\", \"sha\", \"level\", \"tests\", \"new\", \"fixed\"}` (docs/action.md#the-base-branchs-counts); all 0 when no " +
			"suite wrote JUnit; gate with `fromJSON(steps.<id>.outputs.tests).failed`",
	},
	{
		Name: "failed-tests",
		Usage: "JSON array of the ids of the failed, errored and unfinished tests, each once (pytest node ids where known: " +
			"`tests/pytorch/test_numerics.py::test_x[1]`), at most 1000",
	},
	{Name: "quarantined-gpus", Usage: "JSON array of the GPU ids taken out of the pool"},
	{Name: "wall-seconds", Usage: "wall clock of the item phase, in seconds"},
	{Name: "utilisation", Usage: "GPU utilisation of the item phase, in percent"},
	{Name: "lower-bound-seconds", Usage: "`max(total work / GPUs, largest item)`: no schedule could finish sooner"},
	{Name: "report", Usage: "path of the schedule report, `report/schedule.md` in the log dir (docs/report.md)", Path: true},
	{
		Name:  "junit-files",
		Usage: "the merged JUnit files, one path per line: pass it to a `files:` input as is",
		Path:  true,
	},
	{Name: "weights-file", Usage: "path of the local weight table", Path: true},
	{
		Name: "cache-hit",
		Usage: "`true` when a weight table of this arch and level was restored from the Actions cache (not when another level's " +
			"seeded it)",
	},
	{Name: "cache-matched-key", Usage: "the cache key that was restored, of this level or another (empty on a miss)"},
	{
		Name:  "matrix",
		Usage: "in mode `plan`: JSON for `strategy.matrix`, one entry per shard, `{\"shard\": [\"1/3\", \"2/3\", \"3/3\"]}`",
	},
	{
		Name:  "plan",
		Usage: "in mode `plan`: the plan file written (upload it for the shard jobs); in a shard: the plan it ran",
		Path:  true,
	},
	{
		Name: "rerun",
		Usage: "the number of items a re-run ran again, only what failed the last attempt (docs/reruns.md); `0` for a full " +
			"run",
	},
}

// Generated files, relative to the repository root.
const (
	manifestFile = "action.yml"
	devManifest  = ".github/actions/dev/action.yml"
	docsPage     = "docs/action.md"
)

// Generate returns the files go generate ./... writes under root, by path; it
// refuses a manifest the runner would not load (internal/manifest).
func Generate(root string) (map[string][]byte, error) {
	if err := checkTexts(); err != nil {
		return nil, err
	}
	read := func(rel string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(b), err
	}
	yml, err := read(manifestFile)
	if err != nil {
		return nil, err
	}
	doc, err := read(docsPage)
	if err != nil {
		return nil, err
	}
	if yml, err = section(yml, "inputs", inputsYAML()); err != nil {
		return nil, err
	}
	if yml, err = section(yml, "outputs", outputsYAML()); err != nil {
		return nil, err
	}
	if doc, err = between(doc, "inputs", inputsFrom, inputsTable()); err != nil {
		return nil, err
	}
	if doc, err = between(doc, "outputs", "internal/action", outputsTable()); err != nil {
		return nil, err
	}
	files := map[string][]byte{manifestFile: []byte(yml), devManifest: []byte(devAction(yml)), docsPage: []byte(doc)}
	var problems []error
	for _, name := range []string{manifestFile, devManifest} {
		problems = append(problems, manifest.Check(name, files[name])...)
	}
	return files, errors.Join(problems...)
}

// checkTexts refuses an input or output without a description, named twice, or
// with a text that would not read right (settings.CheckText).
func checkTexts() error {
	inputs := Inputs()
	known := func(name string) bool {
		return slices.ContainsFunc(inputs, func(k settings.Knob) bool { return k.Name == name })
	}
	var errs []error
	seen := map[string]bool{}
	check := func(what, name string, texts ...string) {
		if seen[what+name] {
			errs = append(errs, fmt.Errorf("%s %s is listed twice", what, name))
		}
		seen[what+name] = true
		if texts[0] == "" {
			errs = append(errs, fmt.Errorf("%s %s has no description (Usage)", what, name))
		}
		for _, s := range texts {
			if err := settings.CheckText(s, known); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", what, name, err))
			}
		}
	}
	for _, k := range inputs {
		check("input", k.Name, k.Usage, k.Action, k.Empty) // k.CLI names flags: settings' own test
	}
	for _, o := range Outputs {
		check("output", o.Name, o.Usage)
	}
	return errors.Join(errs...)
}

// generatedBy heads each generated part of a file: where its text is edited.
func generatedBy(from, br string) string {
	return "written by go generate ./... from " + from + ";" + br + "edit them there (docs/contributing.md)"
}

// inputsFrom is where the inputs' texts are.
const inputsFrom = "internal/settings (the run's knobs) and internal/action"

func inputsYAML() string {
	var b strings.Builder
	b.WriteString("inputs:\n  # The inputs are " + generatedBy(inputsFrom, "\n  # ") + ".\n")
	for _, k := range Inputs() {
		fmt.Fprintf(&b, "  %s:\n    description: %s\n    required: false\n    default: %s\n", k.Name,
			strconv.Quote(k.Describe(settings.ActionYML)), strconv.Quote(k.Default))
	}
	return b.String()
}

func outputsYAML() string {
	var b strings.Builder
	b.WriteString("outputs:\n  # The outputs are " + generatedBy("internal/action", "\n  # ") + ".\n")
	for _, o := range Outputs {
		fmt.Fprintf(&b, "  %s:\n    description: %s\n", o.Name, strconv.Quote(o.describe(settings.ActionYML)))
	}
	return b.String()
}

func inputsTable() string {
	var b strings.Builder
	b.WriteString("| input | default | |\n|---|---|---|\n")
	for _, k := range Inputs() {
		b.WriteString(row("`"+k.Name+"`", k.DefaultCell(), k.Describe(settings.Markdown)))
	}
	return b.String()
}

func outputsTable() string {
	var b strings.Builder
	b.WriteString("| output | |\n|---|---|\n")
	for _, o := range Outputs {
		b.WriteString(row("`"+o.Name+"`", o.describe(settings.Markdown)))
	}
	return b.String()
}

func row(cells ...string) string {
	return strings.ReplaceAll("| "+strings.Join(cells, " | ")+" |\n", "|  |", "| |")
}

// section replaces action.yml's top-level key name, up to the next top-level key,
// with body (a blank line kept before that key).
func section(yml, name, body string) (string, error) {
	lines := strings.SplitAfter(yml, "\n")
	start := slices.Index(lines, name+":\n")
	if start < 0 {
		return "", fmt.Errorf("%s has no top-level %s: line for go generate to write under", manifestFile, name)
	}
	end := start + 1
	for end < len(lines) && !topLevel.MatchString(lines[end]) {
		end++
	}
	if end < len(lines) {
		body += "\n"
	}
	return strings.Join(lines[:start], "") + body + strings.Join(lines[end:], ""), nil
}

// topLevel is a line that starts a top-level key of a YAML mapping.
var topLevel = regexp.MustCompile(`^[A-Za-z0-9_-]+:`)

// between replaces what lies between docs/action.md's markers of the table name
// with table, written from from.
func between(doc, name, from, table string) (string, error) {
	begin, end := "<!-- "+name+": ", "<!-- end of "+name+" -->\n"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s has no %s…-->, then %s: put the two markers where go generate writes the %s table", docsPage,
			begin, strings.TrimSpace(end), name)
	}
	return doc[:i] + begin + generatedBy(from, " ") + " -->\n" + table + doc[j:], nil
}

// devAction is .github/actions/dev/action.yml: action.yml with the image built from
// this checkout's Dockerfile (the runner resolves runs.image from the action's dir).
func devAction(main string) string {
	s := strings.Replace(main, "name: sgpu-queue\n", "name: sgpu-queue (dev)\n", 1)
	s = regexp.MustCompile(`(?m)^description: >-\n(?:  .*\n)+`).ReplaceAllString(s,
		"description: >-\n  sgpu-queue built from this checkout's Dockerfile, for the project's own CI.\n")
	s = regexp.MustCompile(`(?m)^  image: .*$`).ReplaceAllString(s, "  image: ../../../Dockerfile")
	return "# GENERATED from action.yml by go generate ./... (internal/action): the same inputs and\n" +
		"# outputs, run from the image built from this checkout instead of the published one.\n" +
		"# The project's CI uses it; do not edit by hand.\n" + s
}
