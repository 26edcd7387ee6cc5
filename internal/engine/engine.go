// Package engine runs phases 0–8 from suite configs to a verdict (docs/architecture.md
// maps each phase to its package and function). The CLI and the action are two faces
// over Run.
//
//	phase 0  config.Load             read and check the configs
//	         gpu.Detect              the GPU pool and the arch
//	phase 1  expand.Run              list every suite's items (queue + census)
//	phase 2  schedule.Weigh/Order    weigh from the table, order longest-first, plan
//	phase 3  setup                   one-time setup per list suite
//	phase 4  dispatch.Run            free GPUs take the next item (several for a multi-GPU one)
//	phase 5  verdict.Decide/Write    per-suite verdict files
//	phase 6  weights.Learn/Prune     blend durations into the table, prune gone items
//	phase 7  junit.Merge, report     merged JUnit per suite; report/schedule.md, timeline.svg
//	phase 8  summary                 failed items and the exit code
//
// Each phase has its file, phaseN_<what>.go.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Options configure one run. Paths are as this process sees them.
type Options struct {
	// Face names the options in messages as the user gave them: flags (the zero
	// value) or the action's inputs.
	Face optname.Face
	// Target is where and how suite commands run (docs/cli.md), taken whole by
	// runenv.Open.
	Target runenv.Options
	// Configs are the config files and the TE queue each is read as.
	Configs config.Sources
	LogDir  string // default: <RepoRoot>/test-results/logs
	GPUs    string // --gpus: list or count; "" = the precedence in docs/cli.md#gpus
	Arch    string // "" = detected
	Weights weights.Options
	Policy  string // schedule.Policies(); "" = schedule.DefaultPolicy
	DryRun  bool
	// CheckCommands verifies config commands exist here (ignored with a
	// Target.Container, where this machine's files say nothing).
	CheckCommands bool

	// Dispatch is the bad-day policy (docs/bad-day.md), phase 4's whole.
	Dispatch dispatch.Policy

	// JUnit is where JUnit files go and which items write none.
	JUnit junit.Options

	// Suites selects the suites that run (--suites).
	Suites Selection

	Once Once

	// Full runs every item even when the last attempt left a list of what failed
	// (--full; docs/reruns.md).
	Full bool

	// LogDirReuse lets a run use a log dir that holds files no run of this tool
	// wrote; it writes beside them and deletes none (docs/files.md#what-a-run-owns).
	LogDirReuse bool

	// AllowMixed lets Merge merge shards that ran different plans or configs, with
	// a warning each (docs/files.md, "Merging shards").
	AllowMixed bool

	// Sharding, when it names a shard, runs that shard of a job matrix
	// (docs/runners.md).
	Sharding shard.Spec

	Presentation Presentation
}

// Once are the once-per-run commands, as words (docs/hooks.md "Once per run").
type Once struct {
	Before, After []string
	// SetupEnv (NAME=VALUE) are given to every list suite's setup
	// (TE_CI_SKIP_CK_JIT=1 once Before built the cache).
	SetupEnv []string
}

// Presentation is how the face shows the run.
type Presentation struct {
	Out      io.Writer // console; nil = stdout
	Observer Observer  // phase boundaries and warnings; nil = plain text on Out
	// RunURL is the run's page on github.com (the action sets it): Result.Markdown
	// is then rendered for GitHub, with no relative link into the log dir.
	RunURL string
	// BaseTests is what the last run on the PR's base branch counted, for the
	// report's change.
	BaseTests *record.BaseTests
}

// Observer sees the phases and warnings (the action's ::group:: and annotations);
// the engine calls it from one goroutine at a time.
type Observer interface {
	Phase(n int, title string)
	Warn(msg string)
}

// Result is what a run did, for the face to present.
type Result struct {
	ExitCode    int
	LogDir      string
	Bound       schedule.Bound // of the plan, over its known items
	Suites      []verdict.Suite
	Configs     map[string]config.Suite // each suite's config line, by label
	Stats       report.Stats
	Report      string   // path of report/schedule.md
	JUnit       []string // merged JUnit files, one per suite
	Markdown    string   // its content (rendered for GitHub when Presentation.RunURL is set)
	Comment     string   // the PR comment's text (report.Comment), when Presentation.RunURL is set
	Weights     string   // the store's name
	WeightsFile string   // the local weight table's path
	Cancelled   bool
	Quarantined []record.Quarantined
	// Stop is why the run stopped before its queue was empty; nil when it did not.
	Stop *record.Stop
	// Internal is a worker's panic; phases 5–8 still wrote what was measured.
	Internal *dispatch.WorkerPanic
	// Rerun is a re-run's narrowing (docs/reruns.md); nil for a full run.
	Rerun *record.Rerun

	// NotWritten are files of the run that could not be written (a full disk),
	// relative to the repo root when inside it.
	NotWritten []string
}

// usage is a failure before any item ran that exits 2.
func usage(err error) error { return exitcode.New(exitcode.Usage, err) }

type run struct {
	o        Options
	policy   string         // the dispatch policy in force
	planNote string         // what the planner decided
	target   *runenv.Target // where suite commands run (executor, environment, paths), from phase 0
	out      io.Writer
	obs      Observer
	layout   logdir.Layout
	res      *Result
	weights  weights.Store  // the weight table's store, once phase 2 chose it
	shard    *shard.Job     // run --shard I/K; nil for a whole run
	ports    map[string]int // each GPU's item port (hook.Ports), from phase 0
	// unselected are the suites --suites left out: they pass without running.
	unselected []config.Suite
	// rerun is set by phase 2 when the run is narrowed to what failed last time.
	rerun *rerunning
	// reruns is the re-run state as this run keys and reads it (phases 0 and 2).
	reruns *rerunState
	// unread: the weight table was there but could not be read; it is never saved
	// over.
	unread *weights.UnreadableError
	// optional are the --junit-optional patterns.
	optional []weights.KeyPattern
	// tableWarns are the warnings of phase 2's load of the table, so that its
	// re-read in phase 6 (weights.Rewrite) does not say them again.
	tableWarns map[string]bool
	// foreignCwd is kept in every run.json the run writes (record.Meta.ForeignCwd).
	foreignCwd []string
	// internalShard: a merged shard stopped on an internal error, so the merge
	// exits as that run did (exitcode.Internal).
	internalShard bool
	// lostMu guards res.NotWritten: dispatch workers call run.lost at once.
	lostMu sync.Mutex
}

// Run performs phases 0–8. The error is non-nil only when the run could not get to
// its items; test failures are Result.ExitCode. A cancel or a worker's panic stops
// the items, and phases 5–8 still run on what finished (docs/outcomes.md).
func Run(ctx context.Context, o Options) (*Result, error) {
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

func newRun(o Options) (*run, error) {
	if err := runenv.Settle(o.Face, &o.Target); err != nil {
		return nil, err
	}
	if err := checkSetupEnv(o.Face, o.Target.Hooks, o.Once.SetupEnv); err != nil {
		return nil, usage(err)
	}
	optional, err := junitOptional(o.Face, o.JUnit.Optional)
	if err != nil {
		return nil, usage(err)
	}
	if o.Weights.Default <= 0 {
		o.Weights.Default = schedule.DefaultWeight
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.Target.RepoRoot, "test-results", "logs")
	}
	if o.LogDir, err = filepath.Abs(o.LogDir); err != nil {
		return nil, usage(fmt.Errorf("%s: %w", o.Face.Name("log-dir"), err))
	}
	r := &run{o: o, out: o.Presentation.Out, obs: o.Presentation.Observer, layout: logdir.New(o.LogDir, o.Target.RepoRoot),
		optional: optional}
	if r.out == nil {
		r.out = os.Stdout
	}
	r.out = &syncWriter{w: r.out}
	if r.obs == nil {
		r.obs = plainObserver{w: r.out}
	}
	r.obs = &syncObserver{obs: r.obs}
	r.res = &Result{LogDir: o.LogDir}
	return r, nil
}

func (r *run) warn(msg string) {
	r.obs.Warn(msg)
}

func (r *run) printf(format string, a ...any) { fmt.Fprintf(r.out, format, a...) }

func (r *run) run(ctx context.Context) (*Result, error) {
	suites, pool, release, err := r.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if len(suites) == 0 {
		return r.noneSelected()
	}

	// Phase 1: expand.
	r.obs.Phase(1, "expand the suites into work items")
	exp, err := r.expand(ctx, suites, pool)
	if err != nil {
		if ctx.Err() != nil && !r.o.DryRun {
			return r.stoppedBeforeItems(ctx, 1, suites, pool, nil)
		}
		return nil, r.stoppedOnSuite(1, suites, pool, err)
	}
	// Every listed item is checked against the pool, in every shard alike: an item
	// too wide for the runners fails each shard, not only the one it falls to.
	schedule.ResolveAll(exp.items, len(pool.IDs))
	if err := r.checkWidths(exp, len(pool.IDs)); err != nil {
		return nil, usage(err)
	}
	r.checkOptional(exp.items)
	if r.shard != nil {
		r.keepShard(exp)
		r.checkPlanPool(pool)
	}

	// Phase 2: weigh and order.
	o, err := r.order(ctx, exp, pool)
	if err != nil {
		return nil, err
	}
	if r.o.DryRun {
		return r.res, nil
	}

	// Phase 3: the once-per-run command, then setup once per list suite.
	r.obs.Phase(3, "set up each list suite once")
	err = r.before(ctx, pool, len(o.plan))
	if err == nil {
		err = r.setup(ctx, suites, pool, o.plan)
	}
	if err != nil {
		if ctx.Err() != nil {
			return r.stoppedBeforeItems(ctx, 3, suites, pool, o.queueRows)
		}
		return nil, r.stoppedOnSuite(3, suites, pool, err)
	}

	// Phase 4: run the queue.
	r.obs.Phase(4, fmt.Sprintf("run %s on %s", textfmt.Count(len(o.plan), "item"), textfmt.Count(len(pool.IDs), "GPU")))
	meta := r.meta(suites, pool)
	meta.Pooled = slices.Sorted(maps.Keys(pooledKeys(exp.items)))
	meta.Priors = priorRecords(o.plan)
	d, err := r.dispatch(ctx, exp.items, o.queue, pool, meta)
	if err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	r.after(ctx, pool, len(o.plan))
	// From here on nothing is cancelled: a cancelled run still writes its verdicts,
	// learns from what finished and reports.
	r.afterItems(ctx, d, meta, o, exp)
	return r.res, nil
}

// afterItems is phases 5–8, run whatever phase 4 ended with, from the rows this
// process measured (so a row the disk refused still counts). ctx does not cancel
// them, but for a wait on another run's lock, which the next signal ends.
func (r *run) afterItems(runCtx context.Context, d *dispatch.Result, meta *record.Meta, o *ordered, exp *expansion) {
	ctx := context.WithoutCancel(runCtx)
	wait, stopWait := r.nextSignal(runCtx)
	defer stopWait()
	r.res.Cancelled = d.Cancelled
	r.res.Quarantined = d.Quarantined
	r.res.Stop = d.Stop
	r.res.Internal = d.Panic
	r.res.Rerun = meta.Rerun
	r.countRan(meta, d)
	meta.Wall = d.Wall.Seconds()
	meta.Finished = true
	meta.Cancelled = d.Cancelled
	meta.Quarantined = d.Quarantined
	meta.Unfit = d.Unfit
	meta.Stop = d.Stop
	meta.Calibration = calibrationRecords(o.queue)
	r.writeMeta(meta)
	run := &record.Run{Dir: r.layout.Root, Meta: *meta, Queue: o.queueRows}
	for _, a := range d.Attempts {
		run.Attempts = append(run.Attempts, a.Attempt)
	}
	r.finish(runCtx, wait, run, ending{
		decided: func() { r.saveRerun(ctx, exp, run.Meta.Arch, r.res.Suites, exp.items) },
		learn:   r.learning(o, exp),
		junit:   r.mergedJUnit(ctx, run.Meta.Started),
	})
}

// ending is what the drivers of phases 5–8 (a run, a run stopped before its
// items, a merge) differ in; finish is their one sequence.
type ending struct {
	// decided runs on the verdicts, before phase 6: a run saves what the next
	// attempt re-runs, a merge its advice.
	decided func()
	learn   learning
	// junit is each suite's merged JUnit; nil writes none.
	junit func(verdict.Suite) (*junit.Doc, error)
}

// finish is phases 5–8 on run. wait ends a wait on another run's lock; a cancel
// of runCtx heard during them makes the run a cancelled one.
func (r *run) finish(runCtx, wait context.Context, run *record.Run, e ending) {
	r.verdicts(run)
	if e.decided != nil {
		e.decided()
	}
	run.Meta.Changes, run.Meta.Pruned = r.learn(wait, e.learn)
	r.writeMeta(&run.Meta)
	r.report(wait, run, e.junit)
	if runCtx.Err() != nil && !r.res.Cancelled {
		// Cancelled during phases 5–7, which still wrote in full: a cancelled run,
		// never exit 0 (docs/exit-codes.md).
		r.res.Cancelled, run.Meta.Cancelled = true, true
		r.warn("the run was cancelled after its items ended: the verdicts, weights and report of what was measured are written")
		r.writeMeta(&run.Meta)
	}
	r.summary()
}

// nextSignal is a context that the next signal ends, for the waits of phases 5–7
// on another run; made as phase 5 starts, so any later signal is the next one.
func (r *run) nextSignal(runCtx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(runCtx))
	next := runCtx.Done()
	if runCtx.Err() != nil {
		next = nil // this cancel was heard: the next signal is the second
	}
	go func() {
		select {
		case <-next:
		case <-r.o.Target.Force:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

func (r *run) rel(p string) string {
	if !safefs.Under(r.o.Target.RepoRoot, p) {
		return p
	}
	rel, _ := filepath.Rel(r.o.Target.RepoRoot, p)
	return rel
}

func (r *run) writeMeta(m *record.Meta) {
	if err := r.layout.WriteMeta(m); err != nil {
		r.lost("the run's record", r.layout.Meta(), err)
	}
}

// lost warns once that a file of the run was not written and keeps its path for
// the summary, so that nothing claims it was. Dispatch workers call it at once.
func (r *run) lost(what, path string, err error) {
	rel := r.rel(path)
	r.lostMu.Lock()
	seen := slices.Contains(r.res.NotWritten, rel)
	if !seen {
		r.res.NotWritten = append(r.res.NotWritten, rel)
	}
	r.lostMu.Unlock()
	if seen {
		return
	}
	var ae *atomicfile.Error
	if errors.As(err, &ae) && ae.Path == path {
		err = ae.Err // the path is said already
	}
	r.warn(fmt.Sprintf("%s NOT written (%s): %v", rel, what, r.stateError(err)))
}

type plainObserver struct{ w io.Writer }

func (p plainObserver) Phase(n int, title string) { fmt.Fprintf(p.w, "== phase %d: %s\n", n, title) }
func (p plainObserver) Warn(msg string)           { fmt.Fprintf(p.w, "warning: %s\n", msg) }

// syncObserver serializes the calls to the face's Observer, which keeps counts,
// while dispatch workers and executors warn at once.
type syncObserver struct {
	mu  sync.Mutex
	obs Observer
}

func (s *syncObserver) Phase(n int, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Phase(n, title)
}

func (s *syncObserver) Warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.obs.Warn(msg)
}

// syncWriter serializes the writes of the console the phases' goroutines share.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
