package cli

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
)

const runHelp = `Usage: sgpu-queue run [flags] CONFIG...

Runs phases 0–8 on the suites of the CONFIG files ("<label> <logfile> <list|opaque>
<command> [args...]" per line). Every flag can also be set by its SGPU_* variable
(--log-dir ↔ SGPU_LOG_DIR).

Flags:
`

func runCmd(e Env, args []string) int {
	fs := newFlags("run", e, runHelp)
	var (
		logDir        = fs.String("log-dir", envDefault(e, "log-dir", ""), "log dir (default <repo-root>/test-results/logs)")
		repoRoot      = fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the config's commands are relative to")
		gpus          = fs.String("gpus", envDefault(e, "gpus", ""), "GPU ids (0,1,2,3) or a count (4); default $HIP_VISIBLE_DEVICES, $CUDA_VISIBLE_DEVICES, else detected")
		arch          = fs.String("arch", envDefault(e, "arch", ""), "GPU arch keying the weight table, e.g. gfx942 (default detected)")
		level         = fs.String("level", envDefault(e, "level", ""), "test level passed as TEST_LEVEL (default $TEST_LEVEL, else 99)")
		weightsPath   = fs.String("weights", envDefault(e, "weights", ""), "weight table (default <repo-root>/ci-weights/test_weights.<arch>.l<level>.txt)")
		defaultWeight = fs.String("default-weight", envDefault(e, "default-weight", "999999"), "estimate in seconds of an item the table has never seen")
		dryRun        = fs.Bool("dry-run", envDefault(e, "dry-run", "") == "true", "phases 0–2 only: print the plan, run nothing")
		grace         = fs.Duration("grace", durDefault(e, "grace", executor.DefaultGrace), "on cancel, time between TERM and KILL of running items")
		pinVar        = fs.String("pin-var", envDefault(e, "pin-var", ""), "variable that pins an item to its GPU (default by vendor: HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES)")
		tFactor       = fs.Float64("item-timeout-factor", floatDefault(e, "item-timeout-factor", 0), "kill an item running longer than this × its learned weight (rc 124); 0 = off")
		tMin          = fs.Duration("item-timeout-min", durDefault(e, "item-timeout-min", 5*time.Minute), "the hang deadline is never shorter")
		tMax          = fs.Duration("item-timeout-max", durDefault(e, "item-timeout-max", 0), "the hang deadline is never longer, and is the deadline of unknown items (0 = none)")
		retries       = fs.Int("retries", int(floatDefault(e, "retries", 0)), "queue a failed item again up to this many times (at the back, on another GPU)")
		flakyFail     = fs.Bool("flaky-is-failure", envDefault(e, "flaky-is-failure", "") == "true", "an item that passed only on a rerun fails its suite")
		quarantine    = fs.Int("quarantine-threshold", int(floatDefault(e, "quarantine-threshold", float64(dispatch.DefaultQuarantine.Threshold))), "consecutive fast or device-error failures that take a GPU out of the pool; 0 = off")
	)
	names := hook.Default()
	fs.Func("hook-var", "rename a hook variable, KEY=NAME (repeatable); keys: "+joinKeys(names), names.Set)
	configs, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	if *pinVar != "" {
		if err := names.Set("pin=" + *pinVar); err != nil {
			return fail(e, err)
		}
	}
	dw, err := strconv.ParseFloat(*defaultWeight, 64)
	if err != nil || dw <= 0 || dw != dw {
		return fail(e, fmt.Errorf("--default-weight %q: want a positive number of seconds", *defaultWeight))
	}
	if *tFactor < 0 || *tFactor != *tFactor || *retries < 0 || *quarantine < 0 || *tMin < 0 || *tMax < 0 {
		return fail(e, fmt.Errorf("--item-timeout-*, --retries and --quarantine-threshold must not be negative"))
	}
	if len(configs) == 0 {
		fmt.Fprintln(e.Stderr, "sgpu-queue run: no CONFIG given")
		fs.Usage()
		return 2
	}
	ctx, force, stopSignals := signalContext(e.Stderr)
	defer stopSignals()
	opts := engine.Options{
		Configs: configs, RepoRoot: *repoRoot, LogDir: *logDir, GPUs: *gpus, Arch: *arch,
		Level: *level, WeightsPath: *weightsPath, DefaultWeight: dw, DryRun: *dryRun,
		Hooks: names, Env: e.Environ, CheckCommands: true,
		Exec:    executor.Local{Grace: *grace, Force: force},
		Out:     e.Stdout,
		Timeout: dispatch.Timeout{Factor: *tFactor, Min: *tMin, Max: *tMax},
		Retries: *retries, FlakyIsFailure: *flakyFail,
	}
	opts.Quarantine = dispatch.DefaultQuarantine
	opts.Quarantine.Threshold = *quarantine
	res, err := engine.Run(ctx, opts)
	if err != nil {
		return fail(e, err)
	}
	return res.ExitCode
}

func joinKeys(n hook.Names) string {
	s := ""
	for i, k := range n.Keys() {
		if i > 0 {
			s += ", "
		}
		s += k
	}
	return s
}

func floatDefault(e Env, name string, def float64) float64 {
	if v := envDefault(e, name, ""); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return def
}

func durDefault(e Env, name string, def time.Duration) time.Duration {
	if v := envDefault(e, name, ""); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

// fail prints an error (one line per problem) and returns its exit code: the
// engine's for a run that stopped, 2 (usage) for anything the CLI itself rejected.
func fail(e Env, err error) int {
	for _, line := range splitLines(err.Error()) {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %s\n", line)
	}
	var ee *engine.Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 2
}
