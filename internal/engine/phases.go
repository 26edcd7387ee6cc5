package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

type expansion struct {
	// work is phase 1's one list of items, each with the adapter that runs it; an
	// item's Seq is its index. items are their scheduler's side, which phase 2
	// narrows, weighs and orders.
	work   []expand.Item
	items  []schedule.Item
	suites map[string]config.Suite
	census weights.Census
	rows   []logdir.CensusRow
	listed []logdir.CensusRow // a shard's whole listing, before keepShard
}

// expand is phase 1: the adapter suites' setup= commands, then every listing.
// Listings and setups run on the first GPU (a multi-GPU suite's listings on its
// first GPUs, as many as its items take: suitePin), so capability probes answer for
// the kind of GPU the items will get. A dry run runs setup= too: the listing needs it.
func (r *run) expand(ctx context.Context, suites []config.Suite, pool gpu.Pool) (*expansion, error) {
	req := expand.Request{
		Suites: suites, Exec: r.o.Exec, Hooks: r.o.Hooks, Level: r.o.Level, Dir: r.o.RepoRoot,
		Env:     r.cmdEnv.With(pool.Pin(pool.IDs[0])...),
		Pin:     func(s config.Suite) []string { return suitePin(s, pool) },
		Timeout: r.o.ListTimeout, SetupTimeout: r.o.SetupTimeout,
		// A dry run writes nothing: the listings' stderr is not kept (a failed
		// listing still shows its tail in the error), never held in memory.
		Log: io.Discard,
	}
	if !r.o.DryRun {
		f, err := os.Create(r.layout.ExpandLog())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.layout.ExpandLog(), err)
		}
		defer f.Close()
		req.Log = f
		req.SetupLog = func(s config.Suite) (io.WriteCloser, string, error) {
			path := r.layout.SetupLog(s.Label)
			f, err := os.Create(path)
			return f, r.rel(path), err
		}
	}
	res, err := expand.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, st := range res.Setups {
		r.printSetup(st)
	}
	for _, w := range res.Warnings {
		r.warn(w)
	}
	e := &expansion{work: res.Items, census: res.Census, rows: res.Rows, suites: map[string]config.Suite{}}
	for _, it := range res.Items {
		e.items = append(e.items, it.Item)
	}
	for _, s := range suites {
		e.suites[s.Label] = s
		n := 0
		for _, it := range res.Items {
			if it.Label == s.Label {
				n++
			}
		}
		r.printf("  %-12s %4d item(s) queued, census %s\n", s.Label, n, censusNote(res, s.Label))
	}
	return e, nil
}

// censusNote says what a suite's census is: the count of its own census (failed:
// its weights are not pruned), "-" for a suite of one untagged item (an opaque one:
// nothing to list), else the count of its listing.
func censusNote(res *expand.Result, label string) string {
	keys := res.Census[label]
	switch {
	case res.OwnCensus[label] && keys == nil:
		return "failed"
	case res.OwnCensus[label]:
		return fmt.Sprint(len(keys))
	case len(keys) == 1 && keys[weights.Key(label, "")]:
		return "-"
	}
	return fmt.Sprintf("%d (its listing)", len(keys))
}

// printSetup prints a setup= command that ran.
func (r *run) printSetup(st expand.SetupRun) {
	r.printf("  %-12s setup ok (%s)", st.Suite.Label, textfmt.Dur(st.Secs))
	if st.Log != "" {
		r.printf("  → %s", st.Log)
	}
	if len(st.Shared) > 0 {
		r.printf("  (also for %s)", strings.Join(st.Shared, ", "))
	}
	r.printf("\n")
}

// scheduler is the dispatch policy over the plan (in LPT order), as
// schedule.NewSetup plans it for run, plan and simulate alike. A single-GPU
// workload gets the planned queue when it beats LPT on these weights without losing
// under noise (schedule.NewPlan decides), else LPT; a workload with multi-GPU items
// gets blocks in the policy's block order (docs/suites.md#multi-gpu-suites). order is the
// dispatch order it intends, for the printed plan and queue.tsv.
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

// blockNote says which order a workload with multi-GPU items runs in.
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

// checkWidths fits the items to a pool of gpus GPUs. A width a suite declares (its
// listing line's count, its config's gpus=) above the pool is clamped to the pool
// with a warning naming the item, or the suite when its gpus= says it (TE's rule:
// the test skips the cases that need more GPUs; docs/config.md "Mode options"). An
// item of a tool that takes its count as given (adapter.Sized: a ctest test's
// RESOURCE_GROUPS) cannot run on fewer: it is refused, naming each (up to a few).
func (r *run) checkWidths(plan []schedule.Item, e *expansion, gpus int) error {
	var errs []error
	refused, clamped := 0, 0
	suites := map[string]int{} // label → items clamped by its gpus=
	var labels []string        // those suites, in the order of their first item
	for i := range plan {
		it := &plan[i]
		if it.Width() <= gpus {
			continue
		}
		s := e.suites[it.Label]
		if _, sized := e.work[it.Seq].Adapter.(adapter.Sized); !sized {
			width := it.Width()
			it.GPUs, it.AllGPUs = gpus, false
			if width == s.Options.GPUs {
				if suites[s.Label]++; suites[s.Label] == 1 {
					labels = append(labels, s.Label)
				}
			} else if clamped++; clamped <= 5 {
				r.warn(fmt.Sprintf("item %s declares %d GPUs (its listing line) but the pool has %d: it runs on %d, so cases that need more skip",
					textfmt.Printable(it.Key()), width, gpus, gpus))
			}
			continue
		}
		if refused++; refused > 5 {
			continue
		}
		errs = append(errs, fmt.Errorf("item %s needs %d GPUs but the pool has %d (its own metadata asks for %d (a ctest test's RESOURCE_GROUPS)): lower its count, or run on more GPUs (%s)",
			textfmt.Printable(it.Key()), it.Width(), gpus, it.Width(), r.o.Face.Name("gpus")))
	}
	if clamped > 5 {
		r.warn(fmt.Sprintf("and %d more item(s) declared wider than the pool run on %d GPUs", clamped-5, gpus))
	}
	for _, l := range labels {
		s := e.suites[l]
		r.warn(fmt.Sprintf("suite %q says gpus=%d at %s but the pool has %d: its %s run on %d, so cases that need more skip",
			s.Label, s.Options.GPUs, s.Where(), gpus, textfmt.Count(suites[l], "item"), gpus))
	}
	if refused > 5 {
		errs = append(errs, fmt.Errorf("and %d more item(s) wider than the pool", refused-5))
	}
	return errors.Join(errs...)
}

// printPlan prints the dispatch plan and the lower bound it is measured against;
// with multi-GPU items, each item's GPU count and the bound in GPU-seconds.
func (r *run) printPlan(plan []schedule.Item, order []int, gpus, known int) {
	r.printf("  weights: %s (%d keys)\n", r.res.Weights, known)
	r.printf("  policy %s", r.policy)
	if r.planNote != "" {
		r.printf(": %s", r.planNote)
	}
	mixed := schedule.Mixed(plan)
	if mixed {
		r.printf("\n  %4s  %9s  %4s  %-12s %s\n", "#", "estimate", "gpus", "suite", "item")
	} else {
		r.printf("\n  %4s  %9s  %-12s %s\n", "#", "estimate", "suite", "item")
	}
	for i, idx := range order {
		it := plan[idx]
		est := "unknown"
		if it.Known {
			est = textfmt.Dur(it.Weight)
		}
		if mixed {
			r.printf("  %4d  %9s  %4d  %-12s %s\n", i+1, est, it.Width(), it.Label, dispatch.ShownTag(it.Tag))
		} else {
			r.printf("  %4d  %9s  %-12s %s\n", i+1, est, it.Label, dispatch.ShownTag(it.Tag))
		}
	}
	b := r.res.Bound
	if mixed {
		r.printf("  %d items on %d GPUs: known work %s in GPU-seconds (GPUs × weight), lower bound max(work/%d, largest) = %s",
			len(plan), gpus, textfmt.Dur(b.Total), gpus, textfmt.Dur(b.Seconds))
	} else {
		r.printf("  %d items on %d GPUs: known work %s, lower bound max(work/%d, largest) = %s",
			len(plan), gpus, textfmt.Dur(b.Total), gpus, textfmt.Dur(b.Seconds))
	}
	if b.Unknown > 0 {
		r.printf(", plus %d unknown item(s) (run first, not counted)", b.Unknown)
	}
	r.printf("\n")
}

// writeQueue writes queue/queue.tsv (in dispatch order) and queue/items.tsv, and
// returns the queue rows.
func (r *run) writeQueue(plan []schedule.Item, order []int, e *expansion) ([]logdir.QueueRow, error) {
	rows := make([]logdir.QueueRow, len(plan))
	for i, idx := range order {
		it := plan[idx]
		s := e.suites[it.Label]
		cmd := s.Command
		if cmd == "" {
			cmd = string(s.Mode) // a tool's line: its adapter builds the command
		}
		rows[i] = logdir.QueueRow{Weight: it.Weight, Label: it.Label, Cmd: cmd, Tag: it.Tag, Args: s.Args}
	}
	var q, c bytes.Buffer
	if err := logdir.FormatQueue(&q, rows); err != nil {
		return nil, err
	}
	if err := logdir.FormatCensus(&c, e.rows); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(r.layout.QueueTSV(), q.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if r.shard != nil {
		if err := r.writeShardFiles(e); err != nil {
			return nil, err
		}
	}
	return rows, atomicfile.Write(r.layout.ItemsTSV(), c.Bytes(), 0o644)
}

// suitePin pins a suite's listing and setup: to the first GPU, or a multi-GPU
// suite's to the first GPUs of the pool, as many as its items take (the whole pool
// at most: a wider suite is clamped to it in phase 1).
func suitePin(s config.Suite, pool gpu.Pool) []string {
	n := 1
	switch w, all := s.Width(); {
	case all:
		n = len(pool.IDs)
	case w > 1:
		n = min(w, len(pool.IDs))
	}
	return pool.Pin(strings.Join(pool.IDs[:n], ","))
}

// setupError is a list suite's setup that failed: the run stops, and records
// which suite (stoppedOnSuite).
type setupError struct {
	label string
	err   error
	tail  string // the last lines of its output
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// errSetupDeadline is the cause of a setup's context ended by its deadline.
var errSetupDeadline = errors.New("setup deadline")

// setup is phase 3: each list suite's one-time setup, in config order, on the first
// GPU (a multi-GPU suite's on its first GPUs: suitePin). A failing setup stops the
// run: every item of the suite would fail the same way. A shard skips the setup of a
// suite it has no item of.
func (r *run) setup(ctx context.Context, suites []config.Suite, pool gpu.Pool, plan []schedule.Item) error {
	for _, s := range suites {
		if s.Mode != config.List {
			continue
		}
		if r.shard != nil && !hasItems(plan, s) {
			r.printf("  %-12s no item on this shard: no setup\n", s.Label)
			continue
		}
		path := r.layout.SetupLog(s.Label)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		tail := &textfmt.Tail{}
		env := r.o.Hooks.SetupEnv(s.Environ(r.cmdEnv.With(r.o.SetupEnv...)), r.o.Level, s.GPUKind()).With(suitePin(s, pool)...)
		env, err = r.junitEnv(env, s.Label)
		if err != nil {
			f.Close()
			return err
		}
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if r.o.SetupTimeout > 0 {
			sctx, cancel = context.WithTimeoutCause(ctx, r.o.SetupTimeout, errSetupDeadline)
		}
		w := io.MultiWriter(f, tail)
		res, err := r.o.Exec.Run(sctx, executor.Command{
			Name: fmt.Sprintf("suite %q setup", s.Label),
			Path: s.Path, Args: s.Args, Env: env, Dir: r.o.RepoRoot, Stdout: w, Stderr: w,
		})
		timedOut := res.Cancelled && ctx.Err() == nil && errors.Is(context.Cause(sctx), errSetupDeadline)
		cancel()
		f.Close()
		switch {
		case err != nil:
			return &setupError{label: s.Label, err: fmt.Errorf("%s: suite %q setup (%s=1) could not run: %w", s.Where(), s.Label, r.o.Hooks.SetupOnly, err)}
		case timedOut:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) did not end within %s (setup-timeout) and was stopped; log %s:\n%s", s.Where(), s.Label, r.o.Hooks.SetupOnly, r.o.SetupTimeout, r.rel(path), textfmt.Indent(tail.String()))}
		case res.Cancelled || ctx.Err() != nil:
			return fmt.Errorf("suite %q setup cancelled", s.Label)
		case res.ExitCode != 0:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) exited with %d; log %s:\n%s", s.Where(), s.Label, r.o.Hooks.SetupOnly, res.ExitCode, r.rel(path), textfmt.Indent(tail.String()))}
		}
		r.printf("  %-12s setup ok  → %s\n", s.Label, r.rel(path))
	}
	return nil
}

// junitPrefix is the absolute JUnit prefix from the environment: relative prefixes
// are taken from the repo root, and the trailing slash is kept. With none there it
// is <log dir>/junit/ when Options.JUnitInLogDir (the CLI) asks for one, else "".
func (r *run) junitPrefix() string {
	p, ok := hook.Env(r.o.Env).Get(r.o.Hooks.JUnitPrefix)
	if !ok || p == "" {
		if r.o.JUnitInLogDir {
			return r.layout.JUnitDir() + "/"
		}
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.o.RepoRoot, p)
	} else {
		p = filepath.Clean(p)
	}
	return p + "/"
}

// junitSuffix is the JUnit file suffix the suites are given with the prefix: the
// environment's, else ".xml". It is always passed along with the prefix, because
// TE's scripts write <prefix><tag><suffix> and add nothing themselves: with the
// prefix alone they write files without an extension, which no merge finds.
func (r *run) junitSuffix() string {
	if s, ok := hook.Env(r.o.Env).Get(r.o.Hooks.JUnitSuffix); ok && s != "" {
		return s
	}
	return junit.DefaultSuffix
}

func (r *run) junitEnv(env hook.Env, label string) (hook.Env, error) {
	prefix := r.junitPrefix()
	if prefix == "" {
		return env, nil
	}
	// The suite's folder is there before its setup and items write into it
	// (dispatch makes it again for each item).
	if err := os.MkdirAll(prefix+label, 0o755); err != nil {
		return nil, fmt.Errorf("JUnit folder of suite %q: %w", label, err)
	}
	p, err := r.mapPath(prefix + label)
	if err != nil {
		return nil, err
	}
	return env.With(r.o.Hooks.JUnitPrefix+"="+p+"/", r.o.Hooks.JUnitSuffix+"="+r.junitSuffix()), nil
}

func (r *run) mapPath(p string) (string, error) {
	if r.o.MapPath == nil {
		return p, nil
	}
	return r.o.MapPath(p)
}

// dispatch is phase 4.
func (r *run) dispatch(ctx context.Context, plan []schedule.Item, q schedule.Scheduler, pool gpu.Pool, meta *logdir.Meta, e *expansion) (*dispatch.Result, error) {
	tw, err := r.layout.OpenTimings()
	if err != nil {
		return nil, fmt.Errorf("log dir %s: %w", r.o.LogDir, err)
	}
	defer tw.Close()
	items := r.dispatchItems(plan, e)
	suffix := r.junitSuffix()
	prefix := r.junitPrefix()
	if prefix != "" {
		if err := os.MkdirAll(prefix, 0o755); err != nil {
			r.warn(fmt.Sprintf("JUnit prefix %s: %v", prefix, err))
		}
	}
	meta.Started = time.Now()
	r.writeMeta(meta)
	cfg := dispatch.Config{
		Exec: r.o.Exec, Layout: r.layout, Hooks: r.o.Hooks, Env: r.cmdEnv, Level: r.o.Level,
		GPUs: pool.IDs, PinVar: pool.PinVar, AlsoPin: pool.AlsoPin, Ports: r.ports, JUnitPrefix: prefix, JUnitSuffix: suffix,
		JUnitOptional: r.o.JUnitOptional,
		MapPath:       r.o.MapPath, Dir: r.o.RepoRoot, Timings: tw, Console: r.out, Warn: r.warn, Start: meta.Started,
		Timeout: r.o.Timeout, Retries: r.o.Retries, Quarantine: r.o.Quarantine,
	}
	return dispatch.Run(ctx, cfg, items, q), nil
}

// dispatchItems are the plan's items as dispatch runs them: each the work item of
// its Seq, as phase 2 weighed it, with a re-run's narrowing.
func (r *run) dispatchItems(plan []schedule.Item, e *expansion) []dispatch.Item {
	items := make([]dispatch.Item, len(plan))
	for i, it := range plan {
		w := e.work[it.Seq]
		items[i] = dispatch.Item{Item: it, Suite: w.Suite, Adapter: w.Adapter, Unit: w.Unit}
		r.narrowItem(&items[i])
	}
	return items
}

// learn is phase 6: blend this run's durations into the table, prune the keys of
// items that are gone, save. A shard learns nothing: merge learns once from every
// shard's rows (a shard that saved would have them learned twice).
func (r *run) learn(ctx context.Context, store weights.Store, p *weights.Pool, run *logdir.Run, e *expansion) ([]logdir.Change, []string) {
	if r.shard != nil {
		r.printf("  shard %d/%d: the weight table is left as it is: sgpu-queue merge learns once from every shard's rows\n", r.shard.shard, r.shard.shards)
		return nil, nil
	}
	if r.rerun != nil {
		// A narrowed item's time is not the item's, and a re-run's items ran on a
		// box mostly idle: the attempt being re-run already taught the table.
		r.printf("  a re-run: the weight table is left as it is (a re-run's times are not a full queue's)\n")
		return nil, nil
	}
	changes, pruned := LearnRun(p.View, run, e.census)
	table, aside := p.Join(e.census)
	pruned = append(pruned, aside...)
	r.saveLearned(ctx, store, table, changes, pruned)
	return changes, pruned
}

// saveLearned names the pruned keys, saves the table and says what changed.
func (r *run) saveLearned(ctx context.Context, store weights.Store, table *weights.Table, changes []logdir.Change, pruned []string) {
	for _, k := range pruned {
		r.printf("  pruned %s (no longer listed by its suite's census)\n", textfmt.Printable(k))
	}
	if r.unread != nil {
		r.lost("the weight table", r.unread.Path, fmt.Errorf("not replaced, its keys kept: %w", r.unread))
		return
	}
	if err := store.Save(ctx, table); err != nil {
		r.lost("the weight table", store.String(), err)
	} else {
		r.printf("  %d weight(s) changed, %d pruned, %d keys → %s\n", len(changes), len(pruned), table.Len(), store)
	}
}

// LearnRun is the learning of phase 6 on a run's rows, without saving: each row
// teaches by its outcome (weights.Measure, docs/outcomes.md) a duration, only "at
// least this long", or nothing (no-run); then the keys of items that are gone by
// census are pruned. It returns the weights that changed and the keys pruned. A
// merge calls it once on every shard's rows, so that the table is the one a single
// run of those rows would learn.
func LearnRun(table *weights.Table, run *logdir.Run, census weights.Census) ([]logdir.Change, []string) {
	return learnRows(table, run, census, nil)
}

// learnRows is LearnRun but for the rows skip says were learned already: they
// teach nothing, and their items still count as dispatched for pruning.
func learnRows(table *weights.Table, run *logdir.Run, census weights.Census, skip func(logdir.Timing) bool) ([]logdir.Change, []string) {
	var ms []weights.Measurement
	dispatched := map[string]bool{}
	for _, t := range learnable(run) {
		key := weights.Key(t.Label, run.TagOf(t))
		dispatched[key] = true
		if skip != nil && skip(t) {
			continue
		}
		if m, ok := weights.Measure(key, t.Secs, run.OutcomeOf(t)); ok {
			ms = append(ms, m)
		}
	}
	var changes []logdir.Change
	for _, c := range weights.Learn(table, ms) {
		if c.Kept {
			continue
		}
		changes = append(changes, logdir.Change{Key: c.Key, Old: c.Old, HadOld: c.HadOld, New: c.New})
	}
	return changes, weights.Prune(table, dispatched, census)
}

// learnable picks the rows phase 6 learns from: every row of an item that ran once;
// of an item that ran several times (reruns, quarantine), only its passing attempts
// (outcome ok), or its last one when none passed, so a flaky failure never teaches a
// duration.
func learnable(run *logdir.Run) []logdir.Timing {
	type key struct{ label, item string }
	rows := map[key][]logdir.Timing{}
	var order []key
	for _, t := range run.Timings {
		k := key{t.Label, t.Item}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], t)
	}
	var out []logdir.Timing
	for _, k := range order {
		rs := rows[k]
		if len(rs) == 1 {
			out = append(out, rs[0])
			continue
		}
		n := len(out)
		for _, t := range rs {
			if run.OutcomeOf(t).Passed() {
				out = append(out, t)
			}
		}
		if len(out) == n {
			out = append(out, rs[len(rs)-1])
		}
	}
	return out
}

// writeReport is phase 7.
func (r *run) writeReport(run *logdir.Run) {
	files, err := report.WriteFiles(run, r.res.Suites, r.res.Stats)
	r.res.Markdown = files.Markdown
	r.res.Report = files.MDPath
	for _, e := range files.NotWritten {
		r.lost("the report", e.Path, e.Err)
	}
	if err != nil && len(files.NotWritten) == 0 {
		r.warn(err.Error())
	}
	if r.o.RunURL != "" {
		r.res.Markdown = report.Render(run, r.res.Suites, r.res.Stats, report.Options{RunURL: r.o.RunURL})
	}
	s := r.res.Stats
	r.printf("  wall %s for %s of work on %d GPUs: utilisation %.1f %%, %.1f %% above the lower bound %s\n",
		textfmt.Dur(s.Wall), textfmt.Dur(s.Work), s.GPUs, 100*s.Utilisation, 100*s.AboveBound, textfmt.Dur(s.Bound))
	if slices.Contains(r.res.NotWritten, r.rel(files.MDPath)) {
		r.printf("  report NOT written (%s)\n", r.rel(r.res.Report))
		return
	}
	r.printf("  report → %s\n", r.rel(r.res.Report))
}

// mergeJUnit writes one schema-valid JUnit file per suite from the XML its items
// wrote since the item phase started; an item that failed without writing any
// appears as an error case naming its log.
func (r *run) mergeJUnit(ctx context.Context, since time.Time) {
	prefix := r.junitPrefix()
	if prefix == "" {
		return
	}
	suffix := r.junitSuffix()
	r.writeJUnit(ctx, func(s verdict.Suite) (*junit.Doc, error) {
		return junit.Merge(ctx, s.Label, prefix+s.Label, suffix, junit.ItemsOf(s, r.o.LogDir, r.junitNamed(s.Label)), since)
	})
}

// writeJUnit writes the merged JUnit file of each suite that doc gives one
// (junit.WriteSuites) into the JUnit directory.
func (r *run) writeJUnit(ctx context.Context, doc func(verdict.Suite) (*junit.Doc, error)) {
	r.res.JUnit = append(r.res.JUnit, junit.WriteSuites(r.junitDir(), r.res.Suites, doc, junitLog{r})...)
}

// junitLog is the run's console, warnings and lost files as junit.WriteSuites
// tells them.
type junitLog struct{ r *run }

func (l junitLog) Printf(format string, a ...any)    { l.r.printf(format, a...) }
func (l junitLog) Warn(msg string)                   { l.r.warn(msg) }
func (l junitLog) Lost(what, path string, err error) { l.r.lost(what, path, err) }
func (l junitLog) Rel(path string) string            { return l.r.rel(path) }

// junitDir is where the merged files go.
func (r *run) junitDir() string {
	switch dir := r.o.JUnitDir; {
	case dir == "":
		return filepath.Join(r.o.RepoRoot, "test-results", "junit")
	case !filepath.IsAbs(dir):
		return filepath.Join(r.o.RepoRoot, dir)
	default:
		return dir
	}
}

// junitNamed says whether sgpu-queue named the items' files of a suite (its
// adapter gives them a JUnit file, rather than the suite writing under the prefix).
func (r *run) junitNamed(label string) bool {
	a, _ := adapter.For(r.res.Configs[label]) // its config was checked before the run
	return adapter.JUnitOf(a) != adapter.JUnitUnderPrefix
}

// NoLog stands, in the summary and the action's annotations, for the log of an
// item that never started (verdict.Item.Started): there is no file to name.
const NoLog = "never started: no log"

// summary is phase 8: the failed items with their logs, so the terminal ends useful,
// and the exit code.
func (r *run) summary() {
	failed := verdict.FailedItems(r.res.Suites)
	r.res.ExitCode = outcome.RunExitCode(verdict.ExitCode(r.res.Suites), r.res.Internal != nil || r.internalShard, r.res.Cancelled)
	var broken []verdict.Suite // failed before their items ran, on a shard of a merge
	for _, s := range r.res.Suites {
		if s.Broken != "" {
			broken = append(broken, s)
		}
	}
	r.printSkipped()
	clean := len(failed) == 0 && len(broken) == 0 && r.res.Stop == nil && len(r.res.Quarantined) == 0
	if clean && !r.res.Cancelled && len(verdict.FlakyItems(r.res.Suites)) == 0 {
		r.printf("all %d suites passed\n", len(r.res.Suites))
		r.printNotWritten()
		return
	}
	for _, s := range broken {
		r.printf("suite %s failed: %s\n", s.Label, s.Broken)
	}
	if len(failed) > 0 {
		r.printf("%d failed item(s):\n", len(failed))
	}
	for _, it := range failed {
		rc := fmt.Sprint(it.RC)
		if !it.Finished {
			rc = "-"
		}
		note := ""
		if it.Note != "" {
			note = " (" + it.Note + ")"
		}
		log := NoLog
		if it.Started {
			log = r.rel(filepath.Join(r.o.LogDir, it.LogRel))
		}
		r.printf("  FAIL rc=%s %s %s%s  %s\n", rc, it.Label, dispatch.ShownTag(it.Tag), note, log)
	}
	for _, it := range verdict.FlakyItems(r.res.Suites) {
		r.printf("  flaky: %s %s passed on attempt %d\n", it.Label, dispatch.ShownTag(it.Tag), it.Attempts)
	}
	for _, q := range r.res.Quarantined {
		r.printf("  quarantined %s: %s\n", logdir.GPUName(q.GPU), q.Reason)
	}
	if st := r.res.Stop; st != nil && st.Reason != outcome.StopCancelled {
		r.printf("run stopped (%s): %s\n", st.Reason.Word(), st.Message)
	}
	if r.res.Cancelled {
		if clean {
			r.printf("all %d suites passed, but the run was cancelled\n", len(r.res.Suites))
		}
		r.printf("run cancelled\n")
	}
	r.printNotWritten()
	r.printf("exit code %d\n", r.res.ExitCode)
}

// printNotWritten names the files a full disk kept from being written.
func (r *run) printNotWritten() {
	if len(r.res.NotWritten) > 0 {
		r.printf("NOT written (see the warnings): %s\n", strings.Join(r.res.NotWritten, ", "))
	}
}
