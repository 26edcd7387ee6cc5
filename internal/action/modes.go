package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// The action's modes (docs/runners.md).
const (
	modePlan  = "plan"
	modeRun   = "run"
	modeMerge = "merge"
)

// modeInputs are the inputs some modes do not read: ignoring a careless `shards:`
// in a shard job would run every item on every leg.
var modeInputs = []struct {
	input string
	modes []string // the modes that read it
	hint  string
}{
	{"shards", []string{modePlan}, "a shard job of the matrix sets shard: ${{ matrix.shard }}"},
	{"shard", []string{modeRun}, "mode plan takes shards (how many), a shard job runs with mode run"},
	{"shard-log-dirs", []string{modeMerge}, "set mode: merge to merge the shards' log dirs"},
	{"allow-mixed", []string{modeMerge}, "it lets a merge take shards of different plans or configs"},
	{"plan", []string{modePlan, modeRun}, "a merge reads the plan each shard copied into its log dir"},
}

// checkModeInputs refuses an input that the step's mode does not read.
func (a *act) checkModeInputs(mode string) error {
	var errs []error
	for _, m := range modeInputs {
		if !slices.Contains(m.modes, mode) && strings.TrimSpace(a.gh.GetInput(m.input)) != "" {
			errs = append(errs, fmt.Errorf("input %s is read by mode %s only, and this step's mode is %s: %s (README, Several runners)", m.input,
				strings.Join(m.modes, " and "), mode, m.hint))
		}
	}
	return errors.Join(errs...)
}

// defaultPlanFile is where mode plan writes the plan when the plan input is empty.
const defaultPlanFile = "plan.json"

// mode reads the mode input.
func (a *act) mode() (string, error) {
	switch m := strings.TrimSpace(a.gh.GetInput("mode")); m {
	case "", modeRun:
		return modeRun, nil
	case modePlan, modeMerge:
		return m, nil
	default:
		return "", fmt.Errorf("input mode %q: want plan, run or merge (README, Several runners)", m)
	}
}

// planMode is mode plan: no GPU, no suite script; without a weight table every
// shard takes the items of its hash.
func (a *act) planMode(ctx context.Context, req shard.Request) int {
	a.obs.Phase(0, "restore the weight table")
	local := req.WeightsPath
	if local == "" {
		local = weights.DefaultPath(a.root, req.Arch, req.Level)
	}
	store := a.store(req.Arch, req.Level, local)
	table, warns, err := store.Load(ctx)
	for _, w := range warns {
		a.obs.Warn(w)
	}
	switch {
	case err == nil && table != nil && table.Len() > 0:
		req.Table, req.TableName = table, store.String()
		if a.cache != nil && a.cache.MatchedKey() != "" {
			req.TableName = a.cache.MatchedKey() // the plan names the entry it was made from
		}
	default:
		if err != nil {
			a.obs.Warn(fmt.Sprintf("weight table %s could not be loaded: %v", store, err))
		}
		req.NoTable, req.WeightsPath = true, local
	}
	a.obs.Phase(2, fmt.Sprintf("split the items over %d shards of %d GPUs", req.Shards, req.GPUs))
	p, sum, err := shard.Make(req, a.obs.Warn)
	a.obs.close()
	if err != nil {
		return a.stop(&exitcode.Error{Code: exitcode.Usage, Err: err})
	}
	out := a.path(defaultPlanFile)
	if f := strings.TrimSpace(a.gh.GetInput("plan")); f != "" {
		out = a.path(f)
	}
	if _, err := p.WriteFile(out); err != nil {
		return a.stop(&exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("input plan: %w", err)})
	}
	fmt.Fprint(a.e.Stdout, sum)
	fmt.Fprintf(a.e.Stdout, "plan: wrote %s\n", a.rel(out))
	if a.targets["summary"] {
		a.summary(planMarkdown(p, sum, a.rel(out)))
	}
	values := map[string]string{"matrix": mustJSON(planMatrix(len(p.Shards))), "plan": a.rel(out), "result": "success", "exit-code": "0"}
	a.cacheOutputs(values)
	a.outputs(values)
	a.obs.flushWarnings()
	return exitcode.OK
}

// planMatrix is mode plan's matrix output, as run's shard input reads it.
func planMatrix(shards int) map[string][]string {
	m := map[string][]string{"shard": {}}
	for i := 1; i <= shards; i++ {
		m["shard"] = append(m["shard"], fmt.Sprintf("%d/%d", i, shards))
	}
	return m
}

// planRequest reads mode plan's inputs; every bad one is an error line of its own.
func (a *act) planRequest() (shard.Request, error) {
	values, err := a.values("arch", "level", "weights", "gpus", "queue", "mgpu-config", "hook-var")
	configs, cerr := a.configs(true)
	req, perr := values.Plan(optname.Action, a.gh.GetInput("shards"), a.e.Environ)
	req.RepoRoot, req.Configs.Files = a.root, configs
	if req.Arch == "" {
		err = errors.Join(err, errors.New("mode plan needs input arch (e.g. gfx942): a plan job has no GPU to ask, and the arch keys the weight table"))
	}
	return req, errors.Join(cerr, err, perr)
}

// planMarkdown is mode plan's job summary.
func planMarkdown(p *shard.Plan, sum, file string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## sgpu-queue plan: %d items over %d shards of %d GPUs\n\n", p.Items, len(p.Shards), p.GPUs)
	fmt.Fprintf(&b, "The shard jobs run `%s` with their `shard` from the matrix output; an item the plan does not list goes to the shard "+
		"of the hash of its key.\n\n", file)
	b.WriteString("```text\n" + sum + "```\n")
	return b.String()
}

// mergeMode is mode merge: the shard jobs' log dirs merged and presented as a run
// is.
func (a *act) mergeMode(ctx context.Context, dirs []string, opts engine.Options) int {
	base := a.baseStore(a.level(opts))
	opts.Presentation.BaseTests = base.restore(ctx, a)
	res, err := engine.Merge(ctx, opts, dirs)
	if res != nil {
		base.save(context.WithoutCancel(ctx), a, res, false)
	}
	return a.finish(ctx, res, err)
}

// allowMixed reads the allow-mixed input (mode merge).
func (a *act) allowMixed() (bool, error) {
	switch v := strings.TrimSpace(a.gh.GetInput("allow-mixed")); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("input allow-mixed %q: want true or false", v)
	}
}

func (a *act) shardDirs() ([]string, error) {
	dirs, err := a.paths("shard-log-dirs", "download the shard jobs' artifacts first (actions/download-artifact)")
	if err == nil && len(dirs) == 0 {
		err = fmt.Errorf("input shard-log-dirs is empty: mode merge wants the shard jobs' log dirs, e.g. shards/*/logs")
	}
	return dirs, err
}

// configs reads the config input; need says it must name at least one file.
func (a *act) configs(need bool) ([]string, error) {
	configs, err := a.paths("config", "name the suite config file(s) relative to the workspace")
	if err == nil && len(configs) == 0 && need {
		err = fmt.Errorf("input config is empty: name the suite config file(s), e.g. config: ci/sgpu.conf")
	}
	return configs, err
}

// paths reads a list input of paths, expanding globs (the runner does not); an
// existing path is taken as written: ci/[gpu].conf is a file, not a pattern.
func (a *act) paths(input, hint string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range fields(a.gh.GetInput(input)) {
		p := a.path(f)
		matches := []string{p}
		if _, err := os.Lstat(p); err != nil && strings.ContainsAny(f, "*?[") {
			if matches, err = filepath.Glob(p); err != nil {
				return nil, fmt.Errorf("input %s: %q: %w", input, f, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input %s: %q matches nothing: %s", input, f, hint)
			}
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}
