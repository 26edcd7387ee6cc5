package cli

import (
	"fmt"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/settings"
)

const mergeHelp = `Usage: sgpu-queue merge [--log-dir OUT] [--weights FILE] [--junit-dir DIR] [--allow-mixed] SHARD_LOGDIR...

Merges the log dirs of the shards of a job matrix (each job ran
"sgpu-queue run --shard I/K") into one run in OUT, as if one runner had run
every shard's items: one queue/timings.tsv whose rows keep their shard in the gpu
column ("s2:0": shard 2, GPU 0), per-suite verdicts over every shard, one learning
pass into the weight table (the same table one run of all the rows would learn),
one report (a lane per shard and GPU, the lower bound over all GPUs, each shard's
wall clock against its own bound, what one more runner would save) and one merged
JUnit file per suite (from the shards' merged files). An item of a shard whose log
dir is not given fails, "never ran", and so does an item one shard listed that
its own shard (by the plan, else the hash) did not list, so that none ran it; an
item the plan lists that no shard's listing gave (a capability probe skips it)
does not. Shards that ran different plans or configs are refused (exit 2)
unless --allow-mixed. The exit code is the one a single run of the same rows
would give.

The arch and level are the shards'; the table is --weights, else
<repo-root>/ci-weights/test_weights.<arch>.l<level>.txt. OUT is claimed as run
claims its log dir. Flags can also be set by their SGPU_* variables.

Flags:
`

func mergeCmd(e Env, args []string) int {
	fs := newFlags("merge", e, mergeHelp)
	repoRoot := fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the default weight table and JUnit directory are under")
	values := knobFlags(fs, e, "log-dir", "log-dir-reuse", "weights", "junit-dir")
	allowMixed := fs.Bool("allow-mixed", false,
		"merge shards that ran different plans or configs (a warning for each difference) instead of refusing them")
	dirs, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	if len(dirs) == 0 {
		fmt.Fprintln(e.Stderr, "sgpu-queue merge: no SHARD_LOGDIR given: name the log dir of every shard of the matrix")
		fs.Usage()
		return exitcode.Usage
	}
	ctx, _, stopSignals := signalContext(e.Stderr)
	defer stopSignals()
	opts := engine.Options{
		Target:       runenv.Options{RepoRoot: *repoRoot, Env: e.Environ},
		Presentation: engine.Presentation{Out: &console{w: e.Stdout, stderr: e.Stderr}},
		AllowMixed:   *allowMixed,
	}
	if err := values.Apply(&opts, nil); err != nil {
		return fail(e, settings.Prefixed(err, "--"))
	}
	res, err := engine.Merge(ctx, opts, dirs)
	if err != nil {
		return fail(e, err)
	}
	return res.ExitCode
}
