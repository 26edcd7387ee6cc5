package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

const planHelp = `Usage: sgpu-queue plan --shards K --gpus N [--arch A --level L --weights FILE] [--items FILE] [--out FILE] CONFIG...

Splits the items of the CONFIG files' suites over K runners (shards) of N GPUs
each, balanced by weight, for a job matrix whose jobs each run
"sgpu-queue run --shard I/K". It needs no GPU and runs no suite script: the items
are the weight table's keys of the config's suites (the last run's census: learning
prunes the rest), or the lines of --items FILE ("label TAB tag", as a run's
queue/items.tsv); an opaque suite is its one whole item. Each item takes the GPUs
of its suite's mode options (gpus=N, gpus=all: N).

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
		shards   = fs.String("shards", envDefault(e, "shards", ""), fmt.Sprintf("number of runners (shards) to split the items over, 1 to %d", shard.MaxShards))
		gpus     = fs.String("gpus", envDefault(e, "gpus", ""), "GPUs of each runner: a count (8), or a list of ids (0,1,2,3) to count")
		items    = fs.String("items", envDefault(e, "items", ""), "plan these items (label TAB tag per line, as queue/items.tsv) instead of the table's keys")
		out      = fs.String("out", envDefault(e, "out", "plan.json"), "where to write the plan")
		repoRoot = fs.String("repo-root", envDefault(e, "repo-root", "."), "repository the default weight table is under")
		arch     = fs.String("arch", envDefault(e, "arch", ""), "GPU arch keying the weight table, e.g. gfx942 (default: the one table of the level under <repo-root>/ci-weights)")
		level    = fs.String("level", envDefault(e, "level", ""), "test level keying the weight table (default $TEST_LEVEL, else 99)")
		table    = fs.String("weights", envDefault(e, "weights", ""), "weight table (default <repo-root>/ci-weights/test_weights.<arch>.l<level>.txt)")
	)
	configs, code, stop := parseConfigs(fs, args, e)
	if stop {
		return code
	}
	usageErr := func(err error) int {
		for _, line := range splitLines(err.Error()) {
			fmt.Fprintf(e.Stderr, "sgpu-queue plan: %s\n", line)
		}
		return exitcode.Usage
	}
	req := planRequest{configs: configs, itemsPath: *items, repoRoot: *repoRoot,
		arch: strings.TrimSpace(*arch), level: strings.TrimSpace(*level), weightsPath: strings.TrimSpace(*table)}
	var err error
	if req.shards, err = count("--shards", *shards, shard.MaxShards, "runners"); err != nil {
		if strings.TrimSpace(*shards) == "" {
			err = errors.New("no --shards given: say how many runners to split the items over, e.g. --shards 3")
		}
		return usageErr(err)
	}
	if req.gpus, err = gpuCount(*gpus); err != nil {
		return usageErr(err)
	}
	if req.level == "" {
		req.level = e.Getenv(hook.Default().Level)
	}
	if req.level == "" {
		req.level = "99"
	}
	p, sum, err := makePlan(req, e)
	if err != nil {
		return usageErr(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return usageErr(err)
	}
	if err := atomicfile.Write(*out, b.Bytes(), 0o644); err != nil {
		return usageErr(fmt.Errorf("--out: %w", err))
	}
	e.Stdout.Write(b.Bytes())
	fmt.Fprint(e.Stderr, sum)
	fmt.Fprintf(e.Stderr, "plan: wrote %s\n", *out)
	return 0
}

// planRequest is what plan was asked, flags parsed.
type planRequest struct {
	configs                  []string
	shards, gpus             int
	itemsPath, repoRoot      string
	arch, level, weightsPath string
}

// makePlan reads the configs, the table and the item list, splits the items and
// returns the plan and a summary for stderr. Warnings go to stderr as they come.
func makePlan(req planRequest, e Env) (*shard.Plan, string, error) {
	if err := weights.CheckLevel(req.level); err != nil {
		return nil, "", fmt.Errorf("--level %q: %w", req.level, err)
	}
	suites, err := config.Load(req.configs)
	if err != nil {
		return nil, "", err
	}
	id, table, err := planTable(req)
	if err != nil {
		return nil, "", err
	}
	for _, w := range table.warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	keys, from := shard.TableKeys(table.t), "weights"
	if req.itemsPath != "" {
		from = req.itemsPath
		f, err := os.Open(req.itemsPath)
		if err != nil {
			return nil, "", fmt.Errorf("--items: %w", err)
		}
		keys, err = shard.ParseItems(f, req.itemsPath)
		f.Close()
		if err != nil {
			return nil, "", err
		}
		if !table.found {
			fmt.Fprintf(e.Stderr, "warning: weight table %s not found: no item has a weight, so the shards are balanced by count\n", textfmt.Printable(id.Store))
		}
	} else if !table.found {
		return nil, "", fmt.Errorf("weight table %s not found: plan lists the items from the last run's table (restore it first, or give --weights FILE, --arch or --level), or give --items FILE", id.Store)
	}
	list, warns := shard.Items(suites, keys, req.gpus)
	for _, w := range warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	schedule.Weigh(list, table.t, schedule.DefaultWeight)
	a, err := shard.Assign(list, req.shards, req.gpus)
	if err != nil {
		var we *schedule.WidthError
		if errors.As(err, &we) {
			return nil, "", fmt.Errorf("%w (each shard has --gpus %d)", err, req.gpus)
		}
		return nil, "", err
	}
	p := shard.New(list, a, id, from)
	return p, planSummary(p, a, len(suites)), nil
}

// loadedTable is the weight table plan read.
type loadedTable struct {
	t     *weights.Table
	warns []string
	found bool
}

// planTable finds and reads the weight table as run does, and says what it is.
func planTable(req planRequest) (shard.Identity, loadedTable, error) {
	id := shard.Identity{Arch: req.arch, Level: req.level, Store: req.weightsPath}
	if id.Store == "" {
		if id.Arch == "" {
			arches, err := weights.ArchesAt(req.repoRoot, req.level)
			if err != nil {
				return id, loadedTable{}, fmt.Errorf("no --arch given and %s cannot be read (%w): pass --arch or --weights", filepath.Join(req.repoRoot, "ci-weights"), err)
			}
			if len(arches) != 1 {
				found := "none"
				if len(arches) > 1 {
					found = strings.Join(arches, ", ")
				}
				return id, loadedTable{}, fmt.Errorf("no --arch given: plan sees no GPU, so it goes by the tables of level %s under %s, and found %s; pass --arch (e.g. gfx942) or --weights FILE",
					req.level, filepath.Join(req.repoRoot, "ci-weights"), found)
			}
			id.Arch = arches[0]
		}
		id.Store = weights.DefaultPath(req.repoRoot, id.Arch, req.level)
	}
	data, err := os.ReadFile(id.Store)
	if errors.Is(err, fs.ErrNotExist) {
		return id, loadedTable{t: weights.New()}, nil
	}
	if err != nil {
		return id, loadedTable{}, fmt.Errorf("weight table: %w", err)
	}
	t, warns := weights.Parse(bytes.NewReader(data), id.Store)
	var canon bytes.Buffer
	if err := t.Format(&canon); err != nil {
		return id, loadedTable{}, err
	}
	sum := sha256.Sum256(canon.Bytes())
	id.SHA256, id.Keys = hex.EncodeToString(sum[:]), t.Len()
	return id, loadedTable{t: t, warns: warns, found: true}, nil
}

// planSummary is what plan says on stderr besides the plan itself.
func planSummary(p *shard.Plan, a *shard.Assignment, suites int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %d items of %d suites from %s, %d shards of %d GPUs\n", p.Items, suites, p.ItemsFrom, len(p.Shards), p.GPUs)
	fmt.Fprintf(&b, "  weight table %s (%d keys", textfmt.Printable(p.Weights.Store), p.Weights.Keys)
	if p.Weights.SHA256 != "" {
		fmt.Fprintf(&b, ", sha256 %s…", p.Weights.SHA256[:12])
	}
	b.WriteString(")\n")
	if p.Unknown > 0 {
		fmt.Fprintf(&b, "  %d item(s) without a weight, each planned as %s (the mean of the others)\n", p.Unknown, textfmt.Secs(p.Estimate))
	}
	for _, s := range p.Shards {
		fmt.Fprintf(&b, "  shard %d: %4d items, %s GPU-seconds, predicted wall clock %s\n", s.Shard, s.Items, strconv.FormatFloat(s.Work, 'f', -1, 64), textfmt.Secs(s.Wall))
	}
	fmt.Fprintf(&b, "  predicted wall clock %s, lower bound max(GPU-seconds/%d, largest) = %s", textfmt.Secs(p.Wall), len(p.Shards)*p.GPUs, textfmt.Secs(p.Bound))
	if p.Largest != "" && p.LargestSecs >= p.Bound {
		fmt.Fprintf(&b, ", set by the largest item, %s", textfmt.Printable(p.Largest))
	}
	b.WriteString("\n")
	if a.Moves > 0 {
		fmt.Fprintf(&b, "  refined on replayed wall clocks: %d moves and swaps, slowest shard %s → %s\n", a.Moves, textfmt.Secs(a.LPTWall), textfmt.Secs(p.Wall))
	}
	if a.Hashed > 0 {
		fmt.Fprintf(&b, "  %d item(s) whose key is not UTF-8 are not listed: each runs on its hash shard\n", a.Hashed)
	}
	return b.String()
}
