package cli

import (
	"fmt"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/settings"
	"github.com/rocm/sgpu-queue/internal/verify"
)

const verifyHelp = `Usage: sgpu-queue verify [flags] CONFIG...

Checks the hook round trip of every list suite of the CONFIG files (one suite per
line, modes list, opaque, pytest, ctest, cmd: docs/config.md): it lists the
suite's items as a run does, then re-enters the script once per tag with the
filter that item is dispatched with (TEST_FILTER) and the listing switch
(TE_CI_LIST_ITEMS=1), and checks that exactly that tag comes back. It prints
"<suite>: N tags round-tripped, M mismatches" and each mismatch (selected nothing,
selected several or another: which). Opaque suites are skipped. Run it first when
adopting the queue, and whenever the suite scripts' filter logic changes.

Adapter suites (docs/adapters.md) have no filter: after their setup= commands,
verify lists them and checks that each item's own selection picks exactly that
item (a ctest item's -R, a pytest item's file or node id as the only operand),
printing "<suite>: N <mode> items each select exactly themselves, M mismatches".
cmd suites are skipped.

By default it checks the census (TE_CI_SKIP_CHECK_SUPPORTED=1: every tag that
exists at this level, capability probes answered "supported", no GPU needed);
--queue checks what this host would run instead. The suites of --mgpu-config are
listed as TE's mGPU queue (TEST_MGPU=1), as a run lists them.

Each listing pass, re-entries included, is bounded by --list-timeout, as a run's
are. Exit status: 0 every tag round-trips, 1 a mismatch or a failed listing, 2 a
usage or config error, 130 cancelled. The flags a run also takes can be set by
their SGPU_* variables (--level ↔ SGPU_LEVEL).

Flags:
`

// verifyKnobs are the run settings that concern listing.
var verifyKnobs = []string{"level", "mgpu-config", "hook-var", "container", "container-workdir", "pass-env", "env-script", "grace",
	"list-timeout", "setup-timeout"}

func verifyCmd(e Env, args []string) int {
	fs := newFlags("verify", e, verifyHelp)
	repoRoot := fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the config's commands are relative to")
	queue := fs.Bool("queue", false, "check the queue listing (what this host runs, its capability probes answered here) instead of "+
		"the census")
	jobs := 0
	fs.IntVar(&jobs, "jobs", 0, "re-entries run at once (default: the number of CPUs)")
	fs.IntVar(&jobs, "j", 0, "short for --jobs")
	values := knobFlags(fs, e, verifyKnobs...)
	configs, code, stop := parseConfigs(fs, args, e)
	if stop {
		return code
	}
	if jobs < 0 {
		fmt.Fprintf(e.Stderr, "sgpu-queue: --jobs %d: want a number of re-entries at once, at least 1\n", jobs)
		return exitcode.Usage
	}
	ctx, force, stopSignals := signalContext(e.Stderr)
	defer stopSignals()
	// The knobs verify shares with a run fill a run's options.
	ro := engine.Options{Configs: config.Sources{Files: configs}, Target: runenv.Options{RepoRoot: *repoRoot, Env: e.Environ}}
	if err := values.Apply(&ro, force); err != nil {
		return fail(e, settings.Prefixed(err, "--"))
	}
	res, err := verify.Run(ctx, verify.Options{
		Face:     ro.Face,
		Configs:  ro.Configs,
		Target:   ro.Target,
		Queue:    *queue,
		Jobs:     jobs,
		Out:      &console{w: e.Stdout, stderr: e.Stderr},
		Progress: e.Stderr,
	})
	if err != nil {
		return fail(e, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if res.Cancelled {
		fmt.Fprintln(e.Stderr, "sgpu-queue verify: cancelled before every suite was verified")
	}
	return res.ExitCode()
}
