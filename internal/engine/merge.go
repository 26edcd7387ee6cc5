package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Merge is `sgpu-queue merge`: the log dirs of a job matrix's shards become one
// run in o.LogDir (docs/runners.md), with the files, learning and exit code a
// single run of those rows would give. The arch and level are the shards'.
func Merge(ctx context.Context, o Options, dirs []string) (*Result, error) {
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	r.obs.Phase(0, "read the shards' log dirs")
	shards, warns, err := shard.ReadLogDirs(dirs, o.AllowMixed, o.Face.Enable("allow-mixed"))
	if err != nil {
		return nil, usage(err)
	}
	if s, same := shard.SameDir(r.o.LogDir, shards); same {
		return nil, usage(fmt.Errorf("%s is the log dir of shard %d: merge into another "+
			"(a log dir is claimed, and the shard's files would be deleted)",
			r.o.Face.Given("log-dir", r.o.LogDir), s.Number))
	}
	for _, w := range warns {
		r.warn(w)
	}
	first := shards[0].Run.Meta
	claim := &record.Meta{Tool: logdir.ToolName, Suites: first.Suites, Arch: first.Arch, Level: first.Level,
		Merge: &record.Merge{Shards: first.Shard.Shards}}
	var suiteLabels []string
	for _, s := range first.Suites {
		suiteLabels = append(suiteLabels, s.Label)
	}
	if err := r.checkJUnit(suiteLabels, false); err != nil {
		return nil, usage(err)
	}
	lock, err := r.layout.Claim(claim, r.o.LogDirReuse)
	if err != nil {
		return nil, usage(r.logDirError(err))
	}
	defer lock.Release()
	r.printf("  %d of %d shards, arch %s, level %s → %s\n", len(shards), first.Shard.Shards, first.Arch, first.Level, r.o.LogDir)

	r.obs.Phase(2, "merge the shards")
	table := r.loadTable(ctx, first.Arch, first.Level, "learning into an empty one")
	m := shard.Merge(shards, table, first.DefaultWeight)
	for _, w := range m.Warnings {
		r.warn(w)
	}
	r.warnPlanPools(m.Plan, shards)
	run := m.Run
	run.Dir = r.layout.Root
	run.Meta.Weights = r.rel(r.weights.String()) // as a run records it (run.meta)
	run.Meta.Roots = r.roots()
	for _, s := range shards { // the shards' messages name their runners' roots
		for _, root := range s.Run.Meta.Roots {
			if !slices.Contains(run.Meta.Roots, root) {
				run.Meta.Roots = append(run.Meta.Roots, root)
			}
		}
	}
	run.Meta.ForeignCwd = claim.ForeignCwd
	run.Meta.BaseTests = r.o.Presentation.BaseTests
	// Each shard's quarantined GPUs, named with their shard (shard.Merge), are the
	// merged run's: the summary and the action's outputs say them as a run's.
	r.res.Quarantined = run.Meta.Quarantined
	r.printShards(run)
	if err := r.writeMerged(m, shards); err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("log dir %s: %w", r.o.LogDir, err)}
	}
	r.res.Cancelled = run.Meta.Cancelled
	for _, p := range run.Meta.Merge.Parts {
		if p.Stop != nil && p.Stop.Reason == outcome.StopInternal {
			r.internalShard = true
		}
	}
	// A merge is no cancelled run: a signal ends its waits, and no more.
	r.finish(context.WithoutCancel(ctx), ctx, run, ending{
		decided: func() { run.Meta.Merge.Advice = shard.MergeAdvice(run.Meta.Merge, r.res.Suites, gpusPerShard(m)) },
		learn: learning{title: " (once, from every shard's rows)", loaded: table, apply: func(stored *weights.Table) learned {
			return r.learnPooled(stored, run, m.Census, shards)
		}},
		junit: r.combinedJUnit(ctx, m),
	})
	if len(r.res.NotWritten) > 0 && r.res.ExitCode == exitcode.OK {
		// The merge's files are its result: a merge that could not write them
		// did not do its job, whatever the shards' tests did.
		r.res.ExitCode = exitcode.Failed
		r.printf("the merge's files were not all written: exit code %d\n", r.res.ExitCode)
	}
	return r.res, nil
}

// learnPooled is learnShards on the table split per pool size (weights.SplitPool).
// Shards of different pool sizes teach pool-sized items nothing: one weight cannot
// hold two sizes.
func (r *run) learnPooled(table *weights.Table, run *record.Run, census weights.Census, shards []*shard.LogDir) learned {
	pooled, sizes := map[string]bool{}, map[int]bool{}
	for _, s := range shards {
		for _, k := range s.Run.Meta.Pooled {
			pooled[k] = true
		}
		sizes[len(s.Run.Meta.GPUs)] = true
	}
	if len(pooled) == 0 {
		return r.learnShards(table, run, census, shards, nil)
	}
	if len(sizes) != 1 {
		r.warn(fmt.Sprintf("the shards ran on pools of %d different sizes: the %s that take the whole pool are not learned (their weights are "+
			"kept per pool size)",
			len(sizes), textfmt.Count(len(pooled), "item")))
		return r.learnShards(table, run, census, shards, pooled)
	}
	p := weights.SplitPool(table, pooled, len(shards[0].Run.Meta.GPUs))
	l := r.learnShards(p.View, run, census, shards, nil)
	joined, aside := p.Join(census)
	return learned{table: joined, changes: l.changes, pruned: append(l.pruned, aside...)}
}

// learnShards learns every shard's rows but those the table learned already, so
// that merging again learns nothing new; skipKeys' rows teach nothing.
func (r *run) learnShards(table *weights.Table, run *record.Run, census weights.Census, shards []*shard.LogDir,
	skipKeys map[string]bool) learned {
	done := map[int]bool{}
	var ids []string
	for _, s := range shards {
		switch {
		case table.Learned(s.ID):
			done[s.Number] = true
			r.printf("  shard %d/%d: %s: its rows were learned by an earlier merge: not learned again\n",
				s.Number, run.Meta.Merge.Shards, textfmt.Printable(s.Dir))
		case s.Run.Meta.Rerun != nil:
			// A re-run learns no weights (docs/reruns.md): its rows are a narrowed
			// queue's, its carried items no rows at all.
			done[s.Number] = true
			r.printf("  shard %d/%d: %s: a re-run (%d item(s) ran again, %d carried): its rows teach nothing\n",
				s.Number, run.Meta.Merge.Shards, textfmt.Printable(s.Dir), s.Run.Meta.Rerun.Ran, len(s.Run.Meta.Rerun.Carried))
		}
		ids = append(ids, s.ID)
	}
	changes, pruned := learnItems(table, r.res.Suites, census, func(t record.Attempt) bool {
		return done[t.Shard] || skipKeys[t.Key()]
	})
	table.MarkLearned(ids...)
	return learned{table: table, changes: changes, pruned: pruned}
}

// warnPlanPools warns of each shard that ran on another number of GPUs than the
// plan was made for.
func (r *run) warnPlanPools(p *shard.Plan, shards []*shard.LogDir) {
	for _, s := range shards {
		sh := s.Run.Meta.Shard
		file := ""
		if sh.Plan != nil {
			file = sh.Plan.File
		}
		whose := fmt.Sprintf("shard %d/%d's pool (%s)", s.Number, sh.Shards, textfmt.Printable(s.Dir))
		if w := shard.PoolWarning(p, file, whose, s.Run.Meta.GPUs); w != "" && len(s.Run.Meta.GPUs) > 0 {
			r.warn(w)
		}
	}
}

// gpusPerShard is the runner size the advice plans for: the plan's, else the
// largest shard's.
func gpusPerShard(m *shard.Merged) int {
	if m.Plan != nil {
		return m.Plan.GPUs
	}
	n := 0
	for _, p := range m.Run.Meta.Merge.Parts {
		n = max(n, len(p.GPUs))
	}
	return n
}

func (r *run) printShards(run *record.Run) {
	for _, p := range run.Meta.Merge.Parts {
		if !p.Reported {
			r.printf("  shard %d/%d: not given: its items never ran\n", p.Shard, run.Meta.Merge.Shards)
			continue
		}
		how := ""
		switch {
		case p.Stop != nil:
			how = fmt.Sprintf(", stopped early (%s)", p.Stop.Reason.Word())
		case !p.Finished:
			how = ", never finished"
		}
		r.printf("  shard %d/%d: %s: %d items on %d GPUs, wall %s, its bound %s%s\n", p.Shard, run.Meta.Merge.Shards,
			textfmt.Printable(p.LogDir), p.Items, len(p.GPUs), textfmt.Dur(p.Wall), textfmt.Dur(p.Bound), how)
	}
}

// writeMerged writes the merged run's files and the shards' item logs.
func (r *run) writeMerged(m *shard.Merged, shards []*shard.LogDir) error {
	run, l := m.Run, r.layout
	for _, f := range []struct {
		path string
		data []byte
	}{{l.QueueTSV(), logdir.FormatQueue(run.Queue)}, {l.ItemsTSV(), logdir.FormatItems(m.CensusRows)}, {l.ShardsTSV(), logdir.FormatShards(run.ShardOf, run.Queue)}} {
		if err := l.WriteFile(f.path, f.data); err != nil {
			return r.stateError(err)
		}
	}
	if _, from := shard.PlanOf(shards); from != nil {
		if data, err := safefs.ReadFile(logdir.Layout{Root: from.Run.Dir}.PlanJSON()); err == nil {
			if err := l.WriteFile(l.PlanJSON(), data); err != nil {
				return r.stateError(err)
			}
		}
	}
	aw, err := l.OpenAttempts()
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range run.Attempts {
		errs = append(errs, aw.Append(a))
	}
	errs = append(errs, aw.Close())
	if err := errors.Join(errs...); err != nil {
		r.lost("the merged attempts", l.AttemptsTSV(), err)
	}
	r.writeMeta(&run.Meta)
	n, err := shard.CopyLogs(shards, l)
	if err != nil {
		r.lost("item logs of the shards", l.ItemsDir(), err)
	}
	r.printf("  %d rows, %d item files of the shards → %s\n", len(run.Attempts), n, r.rel(l.Root))
	return nil
}

// combinedJUnit is a merge's JUnit file per suite, from the shards', with an error
// case for each item or suite a shard never reported; nil when no shard wrote any.
func (r *run) combinedJUnit(ctx context.Context, m *shard.Merged) func(verdict.Suite) (*junit.Doc, error) {
	if len(m.JUnit) == 0 {
		return nil
	}
	k := m.Run.Meta.Merge.Shards
	return func(s verdict.Suite) (*junit.Doc, error) {
		var parts []junit.Part
		for _, f := range m.JUnit[s.Label] {
			parts = append(parts, junit.Part{Shard: fmt.Sprintf("%d/%d", f.Shard, k), Path: f.Path})
		}
		// Items no shard file speaks for: a shard that never reported, or
		// stopped before listing (typed: its stop, its record).
		return junit.Combine(ctx, s, parts, func(it verdict.Item) bool {
			return it.Stop == outcome.StopNotReported || it.Unclaimed || !it.Finished && m.Unlisted[it.Shard]
		})
	}
}
