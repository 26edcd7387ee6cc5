package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/settings"
)

const runHelp = `Usage: sgpu-queue run [flags] CONFIG...

Runs phases 0–8 on the suites of the CONFIG files, one suite per line:

  <label> <logfile> list|opaque[,options] <command> [args...]   a script of the hook contract
  <label> <logfile> pytest|ctest|cmd[,options] [args...]        an adapter: no hook script

list: the script lists its items and runs each one; opaque: the script is one item;
pytest: an item per test file (split=test: per test); ctest: an item per test
(split=base: per base name, one parameterised gtest test); cmd: an item per "<tag> <command>" line of
the file given. Options, comma-separated: gpus=N|all (an item of N GPUs takes N at
once), env=NAME=VALUE; for the adapters also setup=COMMAND (run once before listing),
split=, and python= (pytest). Words are quoted as in a shell, never expanded. The
grammar and every option: docs/config.md; the adapter modes: docs/adapters.md.

Every flag can also be set by its SGPU_* variable (--log-dir ↔ SGPU_LOG_DIR).

Flags:
`

func runCmd(e Env, args []string) int {
	fs := newFlags("run", e, runHelp)
	repoRoot := fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the config's commands are relative to")
	values := knobFlags(fs, e)
	configs, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	// The mGPU queue's configs alone are a run too (--mgpu-config).
	if len(configs) == 0 && len(strings.TrimSpace(values["mgpu-config"])) == 0 {
		return noConfig(fs, e)
	}
	ctx, force, stopSignals := signalContext(e.Stderr)
	defer stopSignals()
	opts := engine.Options{
		Configs:       config.Sources{Files: configs},
		Target:        runenv.Options{RepoRoot: *repoRoot, Env: e.Environ},
		CheckCommands: true,
		Presentation:  engine.Presentation{Out: &console{w: e.Stdout, stderr: e.Stderr}},
	}
	if err := values.Apply(&opts, force); err != nil {
		return fail(e, settings.Prefixed(err, "--"))
	}
	// --suites '' selects none, as TE's run_queue.sh --suites '' does.
	if flagGiven(fs, "suites") && strings.TrimSpace(values["suites"]) == "" {
		opts.Suites.Labels, opts.Suites.Given = nil, true
	}
	// Items write JUnit under the log dir, so a no-run is judged from evidence.
	opts.JUnit.InLogDir = true
	testHooks(e, &opts)
	res, err := engine.Run(ctx, opts)
	if err != nil {
		return fail(e, err)
	}
	if p := res.Internal; p != nil {
		return workerPanic(e, p)
	}
	return res.ExitCode
}

// parseConfigs is parse for a command that takes CONFIG...
func parseConfigs(fs *flag.FlagSet, args []string, e Env) ([]string, int, bool) {
	configs, code, stop := parse(fs, args, e)
	if !stop && len(configs) == 0 {
		return nil, noConfig(fs, e), true
	}
	return configs, code, stop
}

func noConfig(fs *flag.FlagSet, e Env) int {
	fmt.Fprintf(e.Stderr, "sgpu-queue %s: no CONFIG given\n", fs.Name())
	fs.Usage()
	return exitcode.Usage
}

// knobFlags defines a flag for each knob named in only (or every knob), defaulting
// to its SGPU_* variable, and returns what they collect.
func knobFlags(fs *flag.FlagSet, e Env, only ...string) settings.Values {
	values := settings.Values{}
	for _, k := range settings.Knobs {
		if len(only) > 0 && !slices.Contains(only, k.Name) {
			continue
		}
		def := envDefault(e, k.Name, k.Default)
		values[k.Name] = def
		switch k.Kind {
		case settings.Bool:
			// A bad SGPU_* value stays as it is, for Apply to name it.
			fs.BoolFunc(k.Name, k.Help(), func(s string) error {
				values[k.Name] = s
				return nil
			})
		case settings.Lines:
			// Repeated flags add lines to what the SGPU_* variable gave.
			fs.Func(k.Name, k.Help(), func(s string) error {
				values[k.Name] += "\n" + s
				return nil
			})
		default:
			fs.Func(k.Name, k.Help(), func(s string) error {
				values[k.Name] = s
				return nil
			})
		}
	}
	return values
}

// workerPanic reports a dispatch worker's panic, once phases 5–8 have written what
// was measured.
func workerPanic(e Env, p *dispatch.WorkerPanic) int { return internalError(e, p.Value, p.Stack) }

// usageError prints an error a command rejected, prefixing each line, and returns
// exitcode.Usage.
func usageError(e Env, cmd string, err error) int {
	for _, line := range splitLines(err.Error()) {
		fmt.Fprintf(e.Stderr, "sgpu-queue %s: %s\n", cmd, line)
	}
	return exitcode.Usage
}

// fail prints an error and returns its exit code, usage for what the CLI rejected.
func fail(e Env, err error) int {
	for _, line := range splitLines(err.Error()) {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %s\n", line)
	}
	return exitcode.Of(err, exitcode.Usage)
}

func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
