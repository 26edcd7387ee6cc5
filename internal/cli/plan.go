package cli

import (
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/shard"
)

const planHelp = `Usage: sgpu-queue plan --shards K --gpus N [--arch A --level L --weights FILE] [--items FILE] [--out FILE]
                       [--queue sgpu|mgpu] [--mgpu-config FILE]... CONFIG...

Splits the items of the CONFIG files' suites over K runners (shards) of N GPUs
each, balanced by weight, for a job matrix whose jobs each run
"sgpu-queue run --shard I/K". It needs no GPU and runs no suite script: the items
are the weight table's keys of the config's suites (the last run's census: learning
prunes the rest), or the lines of --items FILE ("label TAB tag", as a run's
queue/items.tsv); an opaque suite is its one whole item, and list and adapter
suites (pytest, ctest, cmd) are their keys. Each item takes the GPUs of its suite's
mode options (gpus=N, gpus=all: N): an item's own count (a listing line's, a ctest
test's RESOURCE_GROUPS) is not known without listing, but an item whose weight is
kept per pool size (<key>@g<N>: an mGPU item that takes the whole box) takes a
whole runner and that size's weight, as does an opaque suite of the mGPU queue
(--queue mgpu, --mgpu-config, read as "run" reads them). The config: docs/config.md.

The table is found as "run" finds it: --weights, else
<repo-root>/ci-weights/test_weights.<arch>.l<level>.txt. Without --arch (no GPU to
ask), the arch is the one table of the level under <repo-root>/ci-weights.

Rule: each item costs GPUs × weight GPU-seconds; items, largest cost first, go to
the shard with the fewest GPU-seconds; then moves and swaps out of the slowest
shard, judged by replaying each shard's items through the queue a run uses, while
they lower its predicted wall clock. An item without a weight counts as the mean of
the others. At run time, an item the plan does not list goes to shard
1 + FNV-1a-64(key) mod K, so every item runs on exactly one shard.

It writes the plan (JSON: the table's identity, each shard's keys, predicted wall
clock per shard and the lower bound) to --out and prints it; a summary goes to
stderr. The same inputs give the same bytes. Flags can also be set by their SGPU_*
variables (--shards ↔ SGPU_SHARDS).

Flags:
`

func planCmd(e Env, args []string) int {
	fs := newFlags("plan", e, planHelp)
	var (
		shards = fs.String("shards", envDefault(e, "shards", ""), fmt.Sprintf("number of runners (shards) to split the items over, 1 to %d",
			shard.MaxShards))
		gpus  = fs.String("gpus", envDefault(e, "gpus", ""), "GPUs of each runner: a count (8), or a list of ids (0,1,2,3) to count")
		items = fs.String("items", envDefault(e, "items", ""), "plan these items (label TAB tag per line, as queue/items.tsv) instead of "+
			"the table's keys")
		out      = fs.String("out", envDefault(e, "out", "plan.json"), "where to write the plan")
		repoRoot = fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the default weight table is under")
		arch     = fs.String("arch", envDefault(e, "arch", ""), "GPU arch keying the weight table, e.g. gfx942 (default: the one table of the "+
			"level under <repo-root>/ci-weights)")
		level = fs.String("level", envDefault(e, "level", ""), "test level keying the weight table (default $TEST_LEVEL, else 99)")
		table = fs.String("weights", envDefault(e, "weights", ""), "weight table (default "+
			"<repo-root>/ci-weights/test_weights.<arch>.l<level>.txt)")
	)
	values := knobFlags(fs, e, "queue", "mgpu-config")
	configs, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	if len(configs) == 0 && len(strings.TrimSpace(values["mgpu-config"])) == 0 {
		return noConfig(fs, e)
	}
	usageErr := func(err error) int { return usageError(e, "plan", err) }
	values["gpus"], values["arch"], values["level"], values["weights"] = *gpus, *arch, *level, *table
	req, err := values.Plan(optname.CLI, *shards, e.Environ)
	if err != nil {
		return usageErr(err)
	}
	req.Configs.Files, req.ItemsPath, req.RepoRoot = configs, *items, *repoRoot
	p, sum, err := shard.Make(req, func(w string) { fmt.Fprintf(e.Stderr, "warning: %s\n", w) })
	if err != nil {
		return usageErr(err)
	}
	b, err := p.WriteFile(*out)
	if err != nil {
		return usageErr(fmt.Errorf("--out: %w", err))
	}
	e.Stdout.Write(b)
	fmt.Fprint(e.Stderr, sum)
	fmt.Fprintf(e.Stderr, "plan: wrote %s\n", *out)
	return exitcode.OK
}
