package shard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Merged is the merged run, for the engine to write and decide.
type Merged struct {
	// Run is the merged run (its Layout is the caller's); GPUs are named "s<shard>:<gpu>".
	Run *record.Run
	// CensusRows is the merged queue/items.tsv; Census keeps a suite's keys only when every listing
	// shard has its census.
	CensusRows []record.ItemID
	Census     weights.Census
	// JUnit are the shards' merged JUnit files by suite label, in shard order.
	JUnit map[string][]JUnitFile
	// NeverRan are the keys of the items of shards that never reported or never listed: queued with no row.
	NeverRan []string
	// Unlisted are the reporting shards that stopped before their listing.
	Unlisted map[int]bool
	Warnings []string
	// Plan is the plan the shards followed; nil without one.
	Plan *Plan
}

// JUnitFile is one shard's merged JUnit file of a suite.
type JUnitFile struct {
	Shard int
	Path  string // as this process sees it
}

// Merge merges the shards from ReadLogDirs; table and defaultWeight weigh the items that never ran.
func Merge(shards []*LogDir, table *weights.Table, defaultWeight float64) *Merged {
	plan, _ := PlanOf(shards)
	b := &builder{shards: shards, job: Job{Shards: shards[0].Run.Meta.Shard.Shards, Plan: plan},
		res: &Merged{JUnit: map[string][]JUnitFile{}, Unlisted: map[int]bool{}, Plan: plan}, table: table, def: defaultWeight,
		shardOf: map[record.ItemID]int{}}
	b.meta()
	for _, s := range shards {
		b.add(s)
	}
	b.neverRan()
	b.census()
	b.res.Run.ShardOf = b.shardOf
	return b.res
}

// PlanOf is the shards' plan and the first shard that has a copy (one stopped before phase 2 has
// none); nil without a plan.
func PlanOf(shards []*LogDir) (*Plan, *LogDir) {
	for _, s := range shards {
		if s.Plan != nil {
			return s.Plan, s
		}
	}
	return nil, nil
}

type builder struct {
	shards []*LogDir
	job    Job // the shards' K and plan: merge places an item as its shard did
	res    *Merged
	table  *weights.Table
	def    float64
	// shardOf is each queued item's shard.
	shardOf map[record.ItemID]int
}

// meta is the merged run.json: what the shards share, the union of their suites and GPUs, one part per shard.
func (b *builder) meta() {
	fm := b.shards[0].Run.Meta
	m := record.Meta{
		Tool: logdir.ToolName, Format: logdir.FormatOutcomes, PinVar: fm.PinVar, Arch: fm.Arch, Level: fm.Level,
		DefaultWeight: fm.DefaultWeight, Policy: fm.Policy, Finished: true,
		Merge: &record.Merge{Shards: b.job.Shards, Plan: fm.Shard.Plan, Parts: make([]record.MergedShard, b.job.Shards)},
	}
	for i := range m.Merge.Parts {
		p := &m.Merge.Parts[i]
		p.Shard = i + 1
		p.Stop = &record.Stop{Reason: outcome.StopNotReported, Message: fmt.Sprintf("no log dir of shard %d/%d was given to merge", i+1, b.job.Shards)}
		if b.job.Plan != nil {
			p.Predicted = b.job.Plan.Shards[i].Wall
		}
	}
	seen := map[string]bool{}
	for _, s := range b.shards {
		sm := s.Run.Meta
		for _, su := range sm.Suites {
			if !seen[su.Label] {
				seen[su.Label] = true
				m.Suites = append(m.Suites, ranAs(su))
			}
		}
		for _, g := range sm.GPUs {
			m.GPUs = append(m.GPUs, record.ShardGPU(s.Number, g))
		}
		for _, q := range sm.Quarantined {
			q.GPU = record.ShardGPU(s.Number, q.GPU)
			m.Quarantined = append(m.Quarantined, q)
		}
		m.Unfit = append(m.Unfit, sm.Unfit...) // items are in one shard each
		if !sm.Started.IsZero() && (m.Started.IsZero() || sm.Started.Before(m.Started)) {
			m.Started = sm.Started
		}
		m.Cancelled = m.Cancelled || sm.Cancelled
		m.FlakyIsFailure = m.FlakyIsFailure || sm.FlakyIsFailure
		m.Retries = max(m.Retries, sm.Retries)
		m.TimeoutFactor = max(m.TimeoutFactor, sm.TimeoutFactor)
		if sm.FlakyIsFailure != fm.FlakyIsFailure {
			b.warn("%s: flaky-is-failure differs from %s's; the merge counts a flaky item as failed", s.Dir, b.shards[0].Dir)
		}
	}
	b.res.Run = &record.Run{Meta: m}
}

// add merges one shard: its queue, its rows with their outcomes, its part and its JUnit files.
func (b *builder) add(s *LogDir) {
	r, m := b.res.Run, s.Run.Meta
	p := &r.Meta.Merge.Parts[s.Number-1]
	p.Reported, p.LogDir, p.GPUs, p.Started = true, s.Dir, m.GPUs, m.Started
	p.Cancelled, p.Finished, p.Stop = m.Cancelled, m.Finished, m.Stop
	p.BadDay = m.BadDay
	p.Items = len(s.Run.Queue)
	for _, q := range s.Run.Queue {
		ref := q.ItemID
		if other, dup := b.shardOf[ref]; dup {
			b.warn("%s: item %s was queued by shard %d too (were the shards given different plans?); its rows of both are merged", s.Dir,
				textfmt.Printable(q.Key()), other)
			continue
		}
		b.shardOf[ref] = s.Number
		r.Queue = append(r.Queue, q)
	}
	b.carried(s)
	largest := 0.0
	for _, t := range s.Run.Attempts {
		t.Shard = s.Number
		r.Attempts = append(r.Attempts, t)
		p.Work += t.GPUSeconds()
		p.Wall = max(p.Wall, t.EndOff)
		largest = max(largest, t.Secs)
	}
	p.Wall = max(p.Wall, m.Wall)
	r.Meta.Wall = max(r.Meta.Wall, p.Wall)
	if n := len(m.GPUs); n > 0 {
		p.Bound = max(p.Work/float64(n), largest)
	}
	// Only a suite's files under the shard's artifact dir, so run.json cannot point the merge at any
	// file of this machine.
	root := filepath.Dir(abs(s.Dir))
	for _, rel := range m.Shard.JUnit {
		path := filepath.FromSlash(rel)
		label, isXML := strings.CutSuffix(filepath.Base(path), ".xml")
		full := filepath.Join(abs(s.Dir), path)
		under, err := filepath.Rel(root, full)
		if filepath.IsAbs(path) || !isXML || err != nil || !filepath.IsLocal(under) ||
			!slices.ContainsFunc(m.Suites, func(su record.MetaSuite) bool { return su.Label == label }) {
			b.warn("%s: JUnit file %q is not a suite's merged file beside the log dir; left out", s.Dir, rel)
			continue
		}
		b.res.JUnit[label] = append(b.res.JUnit[label], JUnitFile{Shard: s.Number, Path: full})
	}
}

// carried queues the items a shard's re-run did not run again with their earlier outcome (docs/runners.md).
func (b *builder) carried(s *LogDir) {
	rr := s.Run.Meta.Rerun
	if rr == nil {
		return
	}
	r := b.res.Run
	for _, c := range rr.Carried {
		if _, dup := b.shardOf[c.ItemID]; dup {
			continue // a row of its own is newer than anything carried
		}
		b.queue(c.ItemID, s.Number)
		c.Shard = s.Number
		r.Meta.Merge.Carried = append(r.Meta.Merge.Carried, c)
		r.Meta.Merge.Parts[s.Number-1].Items++
	}
}

// neverRan queues the items of shards that never reported or never listed: those a reporting shard listed, else
// the plan's keys. An item no shard listed is census only and not expected.
func (b *builder) neverRan() {
	missing := map[int]bool{}
	for _, p := range b.res.Run.Meta.Merge.Parts {
		if !p.Reported {
			missing[p.Shard] = true
		}
	}
	anyListed := false
	for _, s := range b.shards {
		if s.Listed == nil {
			missing[s.Number], b.res.Unlisted[s.Number] = true, true
		}
		anyListed = anyListed || s.Listed != nil
	}
	var planned []string
	if b.job.Plan != nil {
		for _, s := range b.job.Plan.Shards {
			planned = append(planned, s.Keys...)
		}
	}
	keys, by := b.listing()
	if anyListed {
		listed := map[string]bool{}
		for _, k := range keys {
			listed[k.Key()] = true
		}
		for _, k := range planned {
			if !listed[k] {
				b.res.Run.Meta.Merge.NotListed++
			}
		}
	}
	b.unclaimed(missing, keys, by)
	if len(missing) == 0 {
		return
	}
	if !anyListed && b.job.Plan != nil {
		b.warn("no reporting shard listed its items: the items of the missing shards are taken from the plan")
		for _, k := range planned {
			keys = append(keys, record.ParseItemID(k))
		}
	}
	for _, k := range keys {
		s := b.job.Of(k.Key())
		if missing[s] && b.queueUnrun(k, s) {
			b.res.NeverRan = append(b.res.NeverRan, k.Key())
		}
	}
}

// unclaimed queues the listed items their own shard's listing lacked, so none vanishes from the merge.
func (b *builder) unclaimed(missing map[int]bool, keys []record.ItemID, by map[record.ItemID][]int) {
	m := b.res.Run.Meta.Merge
	for _, k := range keys {
		s := b.job.Of(k.Key())
		if missing[s] || !b.queueUnrun(k, s) {
			continue
		}
		m.Unclaimed = append(m.Unclaimed, record.Unclaimed{ItemID: k, Shard: s, ListedBy: by[k]})
		b.warn("item %s was listed by shard(s) %s but not by its own shard %d/%d, so no shard ran it: "+
			"it fails, never ran (do the runners list alike?)",
			textfmt.Printable(k.Key()), joinInts(by[k]), s, b.job.Shards)
	}
}

// listing is every listed item once, in shard then listing order, and the shards that listed each.
func (b *builder) listing() ([]record.ItemID, map[record.ItemID][]int) {
	var keys []record.ItemID
	by := map[record.ItemID][]int{}
	for _, s := range b.shards {
		for _, k := range s.Listed {
			n := len(by[k])
			if n == 0 {
				keys = append(keys, k)
			}
			if n == 0 || by[k][n-1] != s.Number {
				by[k] = append(by[k], s.Number)
			}
		}
	}
	return keys, by
}

// queueUnrun queues a rowless item of shard s unless it is queued or not the merged run's; it reports whether it did.
func (b *builder) queueUnrun(k record.ItemID, s int) bool {
	if b.shardOf[k] != 0 || !b.suite(k.Label) {
		return false
	}
	b.queue(k, s)
	return true
}

// queue queues item id of shard s without a row, with its suite's command.
func (b *builder) queue(id record.ItemID, s int) {
	w, ok := b.table.Get(id.Key())
	if !ok {
		w = b.def
	}
	q := record.QueueRow{ItemID: id, Weight: w}
	if i := slices.IndexFunc(b.res.Run.Queue, func(o record.QueueRow) bool { return o.Label == id.Label }); i >= 0 {
		q.Cmd, q.Args = b.res.Run.Queue[i].Cmd, b.res.Run.Queue[i].Args
	}
	b.res.Run.Queue = append(b.res.Run.Queue, q)
	b.shardOf[id] = s
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// suite reports whether label is a suite of the merged run.
func (b *builder) suite(label string) bool {
	return slices.ContainsFunc(b.res.Run.Meta.Suites, func(s record.MetaSuite) bool { return s.Label == label })
}

// census merges the shards' items.tsv; a suite's keys prune only when every listing shard has them.
func (b *builder) census() {
	keys := map[string]map[string]bool{}
	has := map[string]int{}
	shardsWithCensus := 0
	seen := map[record.ItemID]bool{}
	for _, s := range b.shards {
		if s.Census == nil {
			continue
		}
		shardsWithCensus++
		labels := map[string]bool{}
		for _, k := range s.Census {
			labels[k.Label] = true
			if keys[k.Label] == nil {
				keys[k.Label] = map[string]bool{}
			}
			keys[k.Label][k.Key()] = true
			if !seen[k] {
				seen[k] = true
				b.res.CensusRows = append(b.res.CensusRows, k)
			}
		}
		for l := range labels {
			has[l]++
		}
	}
	b.res.Census = weights.Census{}
	for l, ks := range keys {
		if has[l] == shardsWithCensus {
			b.res.Census[l] = ks
		}
	}
}

func (b *builder) warn(format string, a ...any) {
	b.res.Warnings = append(b.res.Warnings, fmt.Sprintf(format, a...))
}

// MergeAdvice is Advice on the merged run's measured durations, planned as sgpu-queue plan does;
// "" when a shard never reported or an item never finished.
func MergeAdvice(m *record.Merge, suites []verdict.Suite, gpus int) string {
	k := m.Shards
	if k < 1 || k >= MaxShards || gpus < 1 {
		return ""
	}
	for _, p := range m.Parts {
		if !p.Reported {
			return ""
		}
	}
	var items []schedule.Item
	for _, s := range suites {
		for _, it := range s.Items {
			if !it.Finished {
				return ""
			}
			items = append(items, schedule.Item{ItemID: it.ItemID, Weight: it.Seconds, Known: true, Seq: len(items), GPUs: it.Width})
		}
	}
	if len(items) == 0 {
		return ""
	}
	now, err := Assign(items, k, gpus)
	if err != nil {
		return ""
	}
	next, err := Assign(items, k+1, gpus)
	if err != nil {
		return ""
	}
	key := ""
	if now.LargestItem >= 0 {
		key = items[now.LargestItem].Key()
	}
	return Advice(k, slices.Max(now.Wall), slices.Max(next.Wall), key, now.Largest)
}

// CopyLogs hard-links (else copies) each reporting shard's item files into out's items/; it never replaces a file,
// writes through a link or takes a non-regular file. It returns how many it put there.
func CopyLogs(shards []*LogDir, out logdir.Layout) (int, error) {
	if err := out.MkdirAll(out.ItemsDir()); err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, s := range shards {
		bases := map[string]bool{}
		for _, q := range s.Run.Queue {
			bases[logdir.ItemBase(q.Label, q.Tag)] = true
		}
		src := logdir.Layout{Root: s.Run.Dir}.ItemsDir()
		es, err := os.ReadDir(src)
		if err != nil {
			continue // no items/: nothing ran there
		}
		for _, e := range es {
			f, ok := logdir.ParseItemFile(e.Name())
			if !ok || !bases[f.Base] || !e.Type().IsRegular() {
				continue
			}
			if err := linkOrCopy(filepath.Join(src, e.Name()), filepath.Join(out.ItemsDir(), e.Name())); err != nil {
				if !errors.Is(err, fs.ErrExist) {
					errs = append(errs, err)
				}
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}

// linkOrCopy links or copies src as dst; neither follows a link at dst.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	in, err := safefs.Open(src) // a FIFO made since the listing: never waited on
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}
