package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// ordered is what phase 2 decided; plan is expansion.items in the same order.
type ordered struct {
	plan      []schedule.Item
	queue     schedule.Scheduler
	order     []int
	stored    *weights.Table // the table as loaded, with TE's seeds
	seeds     *weights.Table // what TE's tables added (seedTE)
	table     *weights.Table // the run's view of the stored table (weights.Pool)
	pool      *weights.Pool
	queueRows []record.QueueRow
}

// order is phase 2: weigh and order the items, choose the scheduler, print the plan
// and write the queue.
func (r *run) order(ctx context.Context, exp *expansion, pool gpu.Pool) (*ordered, error) {
	r.obs.Phase(2, "weigh and order the queue")
	r.narrow(exp, pool.Arch)
	o := &ordered{}
	stored := r.loadTable(ctx, pool.Arch, r.o.Target.Level, "ordering without it")
	pooled := pooledKeys(exp.items)
	o.seeds = r.seedTE(ctx, stored, exp, pool, pooled)
	o.stored, o.pool = stored, weights.SplitPool(stored, pooled, len(pool.IDs))
	o.table = o.pool.View
	schedule.Weigh(exp.items, o.table, r.o.Weights.Default)
	r.priors(o, exp, pool)
	schedule.Order(exp.items)
	// The scheduler's view, read from here on: nothing is written back to the items.
	for _, it := range exp.items {
		o.plan = append(o.plan, it.Item)
	}
	r.res.Bound = schedule.LowerBound(o.plan, len(pool.IDs))
	var err error
	if o.queue, o.order, err = r.scheduler(o.plan, len(pool.IDs)); err != nil {
		return nil, usage(err)
	}
	r.printPlan(o.plan, o.order, len(pool.IDs), o.table.Len())
	if r.o.DryRun {
		r.printf("dry run: nothing was run\n")
		return o, nil
	}
	if o.queueRows, err = r.writeQueue(o.plan, o.order, exp); err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("log dir %s: %w", r.o.LogDir, err)}
	}
	return o, nil
}

// loadTable opens r.weights, the store of arch and level, and loads its table;
// one that cannot be loaded is empty, with a warning saying what follows (without).
func (r *run) loadTable(ctx context.Context, arch, level, without string) *weights.Table {
	store := r.o.Weights.Open(r.o.Target.RepoRoot, arch, level)
	r.weights = store
	table, warns, err := store.Load(ctx)
	// Named once loaded: the load decides what serves it (the cache's v1 when its
	// v2 service answered 404).
	r.res.Weights, r.res.WeightsFile = store.String(), r.o.Weights.TablePath(r.o.Target.RepoRoot, arch, level)
	r.tableWarns = map[string]bool{}
	for _, w := range warns {
		r.tableWarns[w] = true
		r.warn(w)
	}
	var unread *weights.UnreadableError
	if errors.As(err, &unread) {
		// Its keys are not this run's to drop: run.learn leaves it as it is.
		r.unread = unread
		r.warn(fmt.Sprintf("%v; %s, and it will NOT be written: the keys it holds are kept (make it readable, or remove it)", unread, without))
		return weights.New()
	}
	if err != nil || table == nil {
		r.warn(fmt.Sprintf("weight table %s could not be loaded, %s: %v", store, without, err))
		table = weights.New()
	}
	return table
}

// scheduler is the dispatch policy over the plan, as schedule.NewSetup plans it for
// run, plan and simulate alike (docs/suites.md#multi-gpu-suites); order is the
// dispatch order it intends.
func (r *run) scheduler(plan []schedule.Item, gpus int) (schedule.Scheduler, []int, error) {
	r.policy = r.o.Policy
	if r.policy == "" {
		r.policy = schedule.DefaultPolicy
	}
	s, err := schedule.NewSetup(r.policy, plan, gpus)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case s.Blocks != nil:
		r.planNote = "multi-GPU items: " + blockNote(*s.Blocks) + ", GPUs held for the next wide item, shorter items backfilled"
	case s.Plan != nil:
		r.planNote = "planned queue " + s.Plan.Note
	}
	return s.Scheduler(), s.Order, nil
}

func blockNote(bp schedule.BlockPlan) string {
	if bp.By != schedule.ByChoice {
		return bp.By + " first"
	}
	if len(bp.Tried) == 0 {
		return "widest first (an item has no weight to choose an order with)"
	}
	note := fmt.Sprintf("%s first, the shortest order on the weights (%s)", bp.From, textfmt.Dur(bp.Wall))
	if bp.Moves > 0 {
		note = fmt.Sprintf("%s first with %d item(s) moved, the shortest order found on the weights (%s)",
			bp.From, bp.Moves, textfmt.Dur(bp.Wall))
	}
	return note
}

// printPlan prints the dispatch plan and the lower bound it is measured against.
func (r *run) printPlan(plan []schedule.Item, order []int, gpus, known int) {
	r.printf("  weights: %s (%d keys)\n", r.res.Weights, known)
	r.printf("%s", priorsNote(plan))
	r.printf("  policy %s", r.policy)
	if r.planNote != "" {
		r.printf(": %s", r.planNote)
	}
	mixed := schedule.Mixed(plan)
	gpuCol := func(v any) string { // the GPUs column, shown only when an item takes several
		if !mixed {
			return ""
		}
		return fmt.Sprintf("  %4v", v)
	}
	r.printf("\n  %4s  %9s%s  %-12s %s\n", "#", "estimate", gpuCol("gpus"), "suite", "item")
	for i, idx := range order {
		it := plan[idx]
		est, from := "unknown", ""
		switch {
		case it.Known:
			est = textfmt.Dur(it.Weight)
		case it.Estimated():
			est, from = "~"+textfmt.Dur(it.Weight), "  (prior: "+textfmt.OneLine(it.Prior.From)+")"
		}
		r.printf("  %4d  %9s%s  %-12s %s%s\n", i+1, est, gpuCol(it.Width()), it.Label, dispatch.ShownTag(it.Tag), from)
	}
	b := r.res.Bound
	work := "known work " + textfmt.Dur(b.Total)
	if b.Priors > 0 {
		// A prior is a guess: the bound it gives is one too.
		work = fmt.Sprintf("estimated work %s (%d item(s) by a prior)", textfmt.Dur(b.Total), b.Priors)
	}
	if mixed {
		work += " in GPU-seconds (GPUs × weight)"
	}
	r.printf("  %d items on %d GPUs: %s, lower bound max(work/%d, largest) = %s", len(plan), gpus, work, gpus, textfmt.Dur(b.Seconds))
	if b.Unknown > 0 {
		r.printf(", plus %d unknown item(s) (run first, not counted)", b.Unknown)
	}
	r.printf("\n")
}

// writeQueue writes queue/queue.tsv and queue/items.tsv, and returns the queue rows.
func (r *run) writeQueue(plan []schedule.Item, order []int, e *expansion) ([]record.QueueRow, error) {
	rows := make([]record.QueueRow, len(plan))
	for i, idx := range order {
		it := plan[idx]
		s := e.suites[it.Label]
		cmd := s.Command
		if cmd == "" {
			cmd = string(s.Mode) // a tool's line: its adapter builds the command
		}
		rows[i] = record.QueueRow{ItemID: it.ItemID, Weight: it.Weight, Cmd: cmd, Args: s.Args}
	}
	if err := r.layout.WriteFile(r.layout.QueueTSV(), logdir.FormatQueue(rows)); err != nil {
		return nil, r.stateError(err)
	}
	if r.shard != nil {
		if err := r.writeShardFiles(e); err != nil {
			return nil, err
		}
	}
	return rows, r.stateError(r.layout.WriteFile(r.layout.ItemsTSV(), logdir.FormatItems(e.rows)))
}
