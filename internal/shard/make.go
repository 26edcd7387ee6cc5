package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Request is what `sgpu-queue plan` (and the action's mode plan) is asked.
type Request struct {
	// Configs are read as a run reads them: the plan's items are a run's items.
	Configs                  config.Sources
	Shards, GPUs             int
	ItemsPath, RepoRoot      string
	Arch, Level, WeightsPath string
	// Table, when set, is the loaded weight table (the action's cache), named TableName; else it is
	// found as a run finds it.
	Table     *weights.Table
	TableName string
	// NoTable allows a plan without a table: every item goes by hash (the action's first run).
	NoTable bool
	// Face names the options in messages (flags, or the action's inputs).
	Face optname.Face
}

// Make splits the configs' items over the shards (Assign: docs/runners.md) and returns the plan and its summary.
// Every error is a usage error.
func Make(req Request, warn func(string)) (*Plan, string, error) {
	if err := weights.CheckLevel(req.Level); err != nil {
		return nil, "", fmt.Errorf("%s %q: %w", req.Face.Name("level"), req.Level, err)
	}
	suites, err := req.Configs.Load()
	if err != nil {
		return nil, "", err
	}
	id, table, err := planTable(req)
	if err != nil {
		return nil, "", err
	}
	for _, w := range table.warns {
		warn(w)
	}
	// A pool-sized item's weight is kept per pool size (<key>@g<N>); the plan's runners have GPUs each.
	pooled := weights.PooledKeys(table.t)
	pool := weights.SplitPool(table.t, pooled, req.GPUs)
	view := pool.View
	keys, from := TableKeys(view), "weights"
	for _, k := range slices.Sorted(maps.Keys(pooled)) {
		if _, ok := view.Get(k); !ok {
			keys = append(keys, record.ParseItemID(k)) // learned on other pool sizes only
		}
	}
	if req.ItemsPath != "" {
		from = req.ItemsPath
		f, err := safefs.Open(req.ItemsPath)
		if err != nil {
			return nil, "", fmt.Errorf("--items: %w", err)
		}
		keys, err = ParseItems(f, req.ItemsPath)
		f.Close()
		if err != nil {
			return nil, "", err
		}
	} else if !table.found && req.NoTable {
		warn(fmt.Sprintf("weight table %s not found and no item list given: the plan lists no item, so every item goes to the shard of the "+
			"hash of its key", textfmt.Printable(id.Store)))
		keys = nil
	} else if !table.found {
		return nil, "", fmt.Errorf("weight table %s not found: plan lists the items from the last run's table (restore it first, or give "+
			"--weights FILE, --arch or --level), or give --items FILE", id.Store)
	}
	list, warns := Items(suites, keys, req.GPUs, pooled)
	for _, w := range warns {
		warn(w)
	}
	if err := planWidths(list, suites, req, warn); err != nil {
		return nil, "", err
	}
	schedule.Weigh(list, view, schedule.DefaultWeight)
	planPriors(list, pool, id, req, warn)
	a, err := Assign(list, req.Shards, req.GPUs)
	if err != nil {
		var we *schedule.WidthError
		if errors.As(err, &we) {
			return nil, "", fmt.Errorf("%w (each shard has %s)", err, req.Face.Set("gpus", strconv.Itoa(req.GPUs)))
		}
		return nil, "", err
	}
	if req.ItemsPath != "" && !table.found {
		what := "no item has a weight, so the shards are balanced by count"
		if a.Priors > 0 {
			what = fmt.Sprintf("only the %d item(s) with a prior have a weight, the others are balanced by count", a.Priors)
		}
		warn(fmt.Sprintf("weight table %s not found: %s", textfmt.Printable(id.Store), what))
	}
	p := New(list, a, id, from)
	return p, planSummary(p, a, len(suites)), nil
}

// planPriors gives the items the table lacks their priors as a run does (schedule.WeighUnknown). A plan reads no
// TE table into its own, so none is left out of the others.
func planPriors(list []schedule.Item, pool *weights.Pool, id Identity, req Request, warn func(string)) {
	own := weights.Options{Path: req.WeightsPath}.TablePath(req.RepoRoot, id.Arch, req.Level)
	for _, w := range schedule.WeighUnknown(list, pool, weights.Place{RepoRoot: req.RepoRoot, Arch: id.Arch, Level: req.Level, Table: own}) {
		warn(w)
	}
}

// planWidths fits the items to a shard's GPUs as a run does (schedule.FitWidths).
func planWidths(list []schedule.Item, suites []config.Suite, req Request, warn func(string)) error {
	bySuite := map[string]config.Suite{}
	sizedSuite := map[string]bool{}
	for _, s := range suites {
		bySuite[s.Label] = s
		if a, err := adapter.New(s); err == nil {
			_, sizedSuite[s.Label] = a.(adapter.Sized)
		}
	}
	warns, err := schedule.FitWidths(list, bySuite, func(it schedule.Item) bool { return sizedSuite[it.Label] }, req.GPUs, req.Face)
	for _, w := range warns {
		warn(w)
	}
	if err != nil {
		return fmt.Errorf("%w; each shard has %s", err, req.Face.Set("gpus", strconv.Itoa(req.GPUs)))
	}
	return nil
}

// loadedTable is the weight table plan read.
type loadedTable struct {
	t     *weights.Table
	warns []string
	found bool
}

// planTable finds and reads the weight table as run does, and says what it is.
func planTable(req Request) (Identity, loadedTable, error) {
	id := Identity{Arch: req.Arch, Level: req.Level, Store: req.WeightsPath}
	if req.Table != nil {
		id.Store = req.TableName
		return identify(id, req.Table, nil)
	}
	if id.Store == "" {
		if id.Arch == "" {
			arches, err := weights.ArchesAt(req.RepoRoot, req.Level)
			if err != nil {
				return id, loadedTable{}, fmt.Errorf("no --arch given and %s cannot be read (%w): pass --arch or --weights",
					filepath.Join(req.RepoRoot, "ci-weights"), err)
			}
			if len(arches) != 1 {
				found := "none"
				if len(arches) > 1 {
					found = strings.Join(arches, ", ")
				}
				return id, loadedTable{}, fmt.Errorf("no --arch given: plan sees no GPU, so it goes by the tables of level %s under %s, and found "+
					"%s; pass --arch (e.g. gfx942) or --weights FILE",
					req.Level, filepath.Join(req.RepoRoot, "ci-weights"), found)
			}
			id.Arch = arches[0]
		}
		id.Store = weights.DefaultPath(req.RepoRoot, id.Arch, req.Level)
	}
	data, err := safefs.ReadFile(id.Store) // a FIFO there is refused, never waited on
	if errors.Is(err, fs.ErrNotExist) {
		return id, loadedTable{t: weights.New()}, nil
	}
	if err != nil {
		return id, loadedTable{}, fmt.Errorf("weight table: %w", err)
	}
	t, warns := weights.Parse(bytes.NewReader(data), id.Store)
	return identify(id, t, warns)
}

// identify completes a found table's identity: its SHA-256 as Format writes it, and its key count.
func identify(id Identity, t *weights.Table, warns []string) (Identity, loadedTable, error) {
	var canon bytes.Buffer
	if err := t.Format(&canon); err != nil {
		return id, loadedTable{}, err
	}
	sum := sha256.Sum256(canon.Bytes())
	id.SHA256, id.Keys = hex.EncodeToString(sum[:]), t.Len()
	return id, loadedTable{t: t, warns: warns, found: true}, nil
}

// planSummary is what plan says on stderr besides the plan itself.
func planSummary(p *Plan, a *Assignment, suites int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %d items of %d suites from %s, %d shards of %d GPUs\n", p.Items, suites, p.ItemsFrom, len(p.Shards), p.GPUs)
	fmt.Fprintf(&b, "  weight table %s (%d keys", textfmt.Printable(p.Weights.Store), p.Weights.Keys)
	if p.Weights.SHA256 != "" {
		fmt.Fprintf(&b, ", sha256 %s…", p.Weights.SHA256[:12])
	}
	b.WriteString(")\n")
	if p.Priors > 0 {
		fmt.Fprintf(&b, "  %d item(s) by a prior: the table lacks them (docs/weights.md, \"Priors for unknown items\")\n", p.Priors)
	}
	if p.Unknown > 0 {
		fmt.Fprintf(&b, "  %d item(s) without a weight, each planned as %s (the mean of the others)\n", p.Unknown, textfmt.Secs(p.Estimate))
	}
	for _, s := range p.Shards {
		fmt.Fprintf(&b, "  shard %d: %4d items, %s GPU-seconds, predicted wall clock %s\n", s.Shard, s.Items, strconv.FormatFloat(s.Work, 'f',
			-1, 64), textfmt.Secs(s.Wall))
	}
	fmt.Fprintf(&b, "  predicted wall clock %s, lower bound max(GPU-seconds/%d, largest) = %s", textfmt.Secs(p.Wall), len(p.Shards)*p.GPUs,
		textfmt.Secs(p.Bound))
	if p.Largest != "" && p.LargestSecs >= p.Bound {
		fmt.Fprintf(&b, ", set by the largest item, %s", textfmt.Printable(p.Largest))
	}
	b.WriteString("\n")
	if a.Moves > 0 {
		fmt.Fprintf(&b, "  refined on replayed wall clocks: %d moves and swaps, slowest shard %s → %s\n", a.Moves, textfmt.Secs(a.LPTWall),
			textfmt.Secs(p.Wall))
	}
	if a.Hashed > 0 {
		fmt.Fprintf(&b, "  %d item(s) whose key is not UTF-8 are not listed: each runs on its hash shard\n", a.Hashed)
	}
	return b.String()
}
