// Package engine runs phases 0–8 from suite configs to a verdict (docs/architecture.md
// maps each phase to its package and function). The CLI (`sgpu-queue run`) and the
// container action are two faces over Run: they only turn flags or inputs into
// Options and present the Result.
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
	"strings"
	"sync"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Options configure one run. Paths are as this process sees them.
type Options struct {
	// Face names the options in messages as the user gave them: flags (the zero
	// value) or the action's inputs.
	Face          optname.Face
	Configs       []string
	RepoRoot      string // default: the current directory
	LogDir        string // default: <RepoRoot>/test-results/logs
	GPUs          string // --gpus: list or count; "" = the precedence in docs/cli.md#gpus
	Arch          string // "" = detected
	Level         string // "" = $TEST_LEVEL, else 99
	WeightsPath   string // "" = <RepoRoot>/ci-weights/test_weights.<arch>.l<level>.txt
	DefaultWeight float64
	Policy        string // schedule.Policies(); "" = schedule.DefaultPolicy
	DryRun        bool
	Hooks         hook.Names
	Env           []string // the environment suites inherit; nil = os.Environ()

	// Exec runs every suite command; nil = local processes with Grace and Force.
	Exec executor.Executor
	// Grace is how long a stopped command gets between TERM and KILL (0 = none);
	// Force, closed, cuts it short.
	Grace time.Duration
	Force <-chan struct{}
	// ListTimeout and SetupTimeout bound each listing pass and each suite's setup
	// (0 = no deadline): a command past it is stopped like a cancelled one and the
	// run stops with its suite named and the tail of its output.
	ListTimeout  time.Duration
	SetupTimeout time.Duration
	// MapPath turns a local path into the path where Exec runs commands.
	MapPath func(string) (string, error)
	// CheckCommands verifies config commands exist here (ignored with Container,
	// where this machine's files say nothing).
	CheckCommands bool
	// Container, when set, runs every suite command inside that running container
	// through the Docker Engine API; ContainerWorkdir is the repo root as seen
	// there ("" = found from the two containers' mounts); PassEnv names the
	// variables of Env (globs allowed) that go into the container besides the hook
	// contract's: its commands otherwise see the container's own environment.
	Container        string
	ContainerWorkdir string
	PassEnv          []string
	// Store returns where the weight table lives for this arch and level; nil = the
	// local file at WeightsPath.
	Store func(arch, level, defaultPath string) weights.Store

	// The bad-day policies (docs/bad-day.md, dispatch package docs).
	Timeout        dispatch.Timeout
	Retries        int
	FlakyIsFailure bool
	Quarantine     dispatch.Quarantine

	// JUnitDir receives one merged JUnit file per suite, <JUnitDir>/<label>.xml,
	// when the environment sets a JUnit prefix; "" = <RepoRoot>/test-results/junit.
	JUnitDir string
	// JUnitInLogDir: when the environment sets no JUnit prefix, the setups and items
	// get <log dir>/junit/<label>/ (logdir.Layout.JUnitDir), so that every run has
	// the evidence a no-run is judged from (the CLI; the action sets its own).
	JUnitInLogDir bool

	// RunURL is the run's page on github.com (the action sets it): Result.Markdown
	// is then rendered for GitHub, with log tails inline and no relative link,
	// while report/schedule.md keeps its links into the log dir.
	RunURL string

	// Queue is TE's queue every config of Configs is read as: config.QueueSGPU
	// ("" too) or config.QueueMGPU; MGPUConfigs are more configs read as the mGPU
	// queue, in the same run (docs/hooks.md "Queues").
	Queue       string
	MGPUConfigs []string

	// Suites, when SelectSuites, are the labels of the suites that run (--suites);
	// without it $TE_CI_SUITES of Env selects when set (set but empty: none). The
	// others pass without running (docs/config.md "Selecting suites").
	Suites       []string
	SelectSuites bool

	// PortBase is the first of the items' PET_MASTER_PORT ports (--port-base):
	// "" = $TE_CI_PORT_BASE of Env, else 29600 (hook.PortBase).
	PortBase string

	// CoreDumps keeps the core-file limit sgpu-queue was started with for the
	// commands it starts; false (the default) sets it to 0 (executor.NoCoreDumps).
	CoreDumps bool
	// Before and After are the once-per-run commands, as words (config.SplitFields;
	// docs/hooks.md "Once per run"): Before runs in phase 3 ahead of the setups,
	// pinned to the first GPU, and its failure stops the run as a failed setup
	// does; After runs once the queue has drained, its failure a warning. SetupEnv
	// (NAME=VALUE) are given to every list suite's setup (TE_CI_SKIP_CK_JIT=1).
	Before, After []string
	SetupEnv      []string
	// JUnitOptional are the weight keys (path.Match patterns) of items whose
	// re-entry writes no JUnit file: judged by their exit code alone, never no-run.
	JUnitOptional []string

	// Full runs every item even when the last attempt left a list of what failed
	// (--full; docs/reruns.md).
	Full bool

	// LogDirReuse lets a run use a log dir that holds files no run of this tool
	// wrote; it writes beside them and deletes none (docs/files.md#what-a-run-owns).
	LogDirReuse bool

	// AllowMixed lets Merge merge shards that ran different plans or configs
	// (docs/files.md, "Merging shards"): each difference is a warning instead of
	// the refusal, and what one shard listed and none ran still fails.
	AllowMixed bool

	// Shard and Shards, when Shards > 0, run shard Shard (1 … Shards) of a job
	// matrix (docs/runners.md): of the items listed, those PlanFile gives
	// it, and those the plan does not know (every item without PlanFile) by the
	// hash of their key. A shard learns nothing: sgpu-queue merge learns once
	// from every shard's rows.
	Shard, Shards int
	PlanFile      string

	Out      io.Writer // console; nil = stdout
	Observer Observer  // phase boundaries and warnings; nil = plain text on Out
}

// Observer sees the phases and warnings, so the action can fold each phase in a
// ::group:: and turn warnings into annotations. The engine calls it from one
// goroutine at a time, though warnings come from the dispatch workers too.
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
	Markdown    string   // its content (rendered for GitHub when Options.RunURL is set)
	Weights     string   // the store's name
	WeightsFile string   // the local weight table's path
	Cancelled   bool
	Quarantined []logdir.Quarantined
	// Stop is why the run stopped before its queue was empty (a typed reason and
	// the message the user saw); nil when it did not.
	Stop *logdir.Stop
	// Internal is a worker's panic: phases 5–8 still wrote what was measured, and
	// ExitCode is exitcode.Internal; the face reports it in one line (its stack
	// only with SGPU_DEBUG).
	Internal *dispatch.WorkerPanic
	// Rerun is a re-run's narrowing (docs/reruns.md); nil for a full run.
	Rerun *logdir.Rerun

	// NotWritten are files of the run that could not be written (a full disk),
	// relative to the repo root when inside it.
	NotWritten []string
}

// usage is a failure before any item ran that exits 2; others give their code by
// an *exitcode.Error too.
func usage(err error) error { return exitcode.New(exitcode.Usage, err) }

// run is the state of one Run.
type run struct {
	o        Options
	policy   string   // the dispatch policy in force
	planNote string   // what the planner decided
	cmdEnv   hook.Env // the environment suite commands start from
	out      io.Writer
	obs      Observer
	layout   logdir.Layout
	res      *Result
	weights  weights.Store  // the weight table's store, once phase 2 chose it
	shard    *sharding      // run --shard I/K; nil for a whole run
	ports    map[string]int // each GPU's item port (hook.Ports), from phase 0
	// unselected are the suites --suites left out: they pass without running.
	unselected []config.Suite
	// rerun is set by phase 2 when the run is narrowed to what failed last time.
	rerun *rerunning
	// unread: the weight table was there but could not be read; it is never saved
	// over.
	unread *weights.UnreadableError
	// foreignCwd: the cwd/ entries there when the run claimed the log dir
	// (logdir.Meta.ForeignCwd), kept in every run.json it writes.
	foreignCwd []string
	// internalShard: a merged shard stopped on an internal error, so the merge
	// exits as that run did (exitcode.Internal).
	internalShard bool
}

// Run performs phases 0–8. The error is non-nil only when the run could not get to
// its items (bad input, a failing listing or setup: an *Error with its exit code);
// test failures are Result.ExitCode.
//
// Cancelling ctx stops dispatch and the running items; phases 5–8 still run, so
// nothing measured is lost; a cancel during listing or setup still writes every
// suite's verdict (docs/outcomes.md). A worker's panic stops the other items, phases
// 5–8 run on what finished, and Result.Internal carries it (ExitCode 70).
func Run(ctx context.Context, o Options) (*Result, error) {
	r, err := newRun(o)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

func newRun(o Options) (*run, error) {
	if err := Settle(&o); err != nil {
		return nil, err
	}
	if err := checkSetupEnv(o.Face, o.Hooks, o.SetupEnv); err != nil {
		return nil, usage(err)
	}
	if o.DefaultWeight <= 0 {
		o.DefaultWeight = schedule.DefaultWeight
	}
	var err error
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.RepoRoot, "test-results", "logs")
	}
	if o.LogDir, err = filepath.Abs(o.LogDir); err != nil {
		return nil, usage(fmt.Errorf("%s: %w", o.Face.Name("log-dir"), err))
	}
	r := &run{o: o, out: o.Out, obs: o.Observer, layout: logdir.Layout{Root: o.LogDir}}
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
	if err := r.checkWidths(exp.items, exp, len(pool.IDs)); err != nil {
		return nil, usage(err)
	}
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
	meta.Pooled = slices.Sorted(maps.Keys(pooledKeys(o.plan)))
	d, err := r.dispatch(ctx, o.plan, o.queue, pool, meta, exp)
	if err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	r.after(ctx, pool, len(o.plan))
	// From here on nothing is cancelled: a cancelled run still writes its verdicts,
	// learns from what finished and reports.
	r.afterItems(ctx, d, meta, o, exp)
	return r.res, nil
}

// readConfig is phase 0: the configs (every problem of every file at once), where
// commands run, the GPU pool and arch, and the claimed, locked log dir. release
// undoes what it opened.
func (r *run) readConfig(ctx context.Context) (suites []config.Suite, pool gpu.Pool, release func(), err error) {
	r.obs.Phase(0, "read the config")
	suites, err = config.Load(slices.Concat(r.o.Configs, r.o.MGPUConfigs))
	config.MarkQueues(suites, r.o.Queue, r.o.MGPUConfigs)
	check := r.o.CheckCommands && r.o.Container == ""
	if err = errors.Join(err, config.Resolve(suites, r.o.RepoRoot, check), adapter.Check(suites), r.readSharding()); err != nil {
		return nil, pool, nil, usage(err)
	}
	r.res.Configs = map[string]config.Suite{}
	for _, s := range suites {
		r.res.Configs[s.Label] = s
	}
	if suites, r.unselected, err = r.selectSuites(suites); err != nil {
		return nil, pool, nil, usage(err)
	}
	if len(suites) == 0 {
		return nil, pool, func() {}, nil // nothing selected: no GPU needed (run.noneSelected)
	}
	target, err := OpenTarget(ctx, r.o, r.warn, r.o.RepoRoot, r.o.LogDir)
	if err != nil {
		return nil, pool, nil, usage(err)
	}
	release = func() { target.Close() }
	fail := func(err error) ([]config.Suite, gpu.Pool, func(), error) {
		release()
		return nil, pool, nil, usage(err)
	}
	r.o.Exec, r.o.MapPath, r.cmdEnv = target.Exec, target.MapPath, target.Env
	if target.Root != "" {
		r.printf("  commands run in container %s (repo root there: %s)\n", r.o.Container, target.Root)
	}
	for _, s := range suites {
		words := s.Args
		if s.Command != "" { // a script's line; a tool's has its arguments only
			words = append([]string{s.Command}, s.Args...)
		}
		queue := ""
		if s.MGPU {
			queue = "   mGPU queue"
		}
		r.printf("  %-12s %-6s %s   (%s)%s\n", s.Label, s.Mode, config.QuoteWords(words), s.Where(), queue)
	}
	if pool, err = r.detect(ctx); err != nil {
		return fail(err)
	}
	if r.ports, err = r.itemPorts(pool); err != nil {
		return fail(err)
	}
	r.printf("  level %s, log dir %s\n", r.o.Level, r.o.LogDir)
	if !r.o.DryRun {
		claim := r.claim(suites, pool)
		lock, err := r.layout.Claim(claim, r.o.LogDirReuse)
		if err != nil {
			return fail(logDirError(r.o.Face, r.o.LogDir, err))
		}
		r.foreignCwd = claim.ForeignCwd
		release = func() { lock.Release(); target.Close() }
	}
	return suites, pool, release, nil
}

// itemPorts gives each GPU of the pool the PET_MASTER_PORT of an item that starts
// on it (docs/hooks.md "Ports").
func (r *run) itemPorts(pool gpu.Pool) (map[string]int, error) {
	fromEnv, _ := hook.Env(r.o.Env).Get(hook.PortBaseVar)
	base, err := hook.PortBase(r.o.PortBase, fromEnv)
	if err != nil {
		return nil, err
	}
	return hook.Ports(base, pool.IDs)
}

// detect finds the GPU pool and the arch where the items run.
func (r *run) detect(ctx context.Context) (gpu.Pool, error) {
	pool, err := gpu.Detect(ctx, gpu.Options{Face: r.o.Face, Explicit: r.o.GPUs, Arch: r.o.Arch,
		PinVar: r.o.Hooks.Pin, Env: r.cmdEnv, Exec: r.o.Exec})
	if err != nil {
		return pool, err
	}
	for _, w := range pool.Warnings {
		r.warn(w)
	}
	r.printf("  gpus: %s\n", pool.Describe())
	if pool.Arch == "" {
		pool.Arch = "unknown"
		r.warn(fmt.Sprintf("the GPU arch could not be detected; the weight table is keyed \"unknown\": "+
			"give %s (e.g. %s) to share weights with runs that know it",
			r.o.Face.Name("arch"), r.o.Face.Set("arch", "gfx942")))
	}
	return pool, nil
}

// ordered is what phase 2 decided: the weighed items, the scheduler over them and
// its intended order, the weight table it weighed them from, and queue.tsv's rows.
type ordered struct {
	plan      []schedule.Item
	queue     schedule.Scheduler
	order     []int
	store     weights.Store
	table     *weights.Table // the run's view of the stored table (weights.Pool)
	pool      *weights.Pool
	queueRows []logdir.QueueRow
}

// order is phase 2: weigh the items from the table, order them, choose the
// scheduler, print the plan and (unless a dry run) write queue.tsv and items.tsv.
func (r *run) order(ctx context.Context, exp *expansion, pool gpu.Pool) (*ordered, error) {
	r.obs.Phase(2, "weigh and order the queue")
	r.narrow(exp, pool.Arch)
	o := &ordered{plan: exp.items}
	store, stored := r.loadTable(ctx, pool.Arch, "ordering without it")
	pooled := pooledKeys(o.plan)
	r.seedTE(ctx, stored, exp, pool, pooled)
	o.store, o.pool = store, weights.SplitPool(stored, pooled, len(pool.IDs))
	o.table = o.pool.View
	schedule.Weigh(o.plan, o.table, r.o.DefaultWeight)
	schedule.Order(o.plan)
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

// afterItems is phases 5–8, run whatever phase 4 ended with (a cancel, a stalled
// pool, a worker's panic): verdicts, learning, the report and the summary, all
// from the rows this process measured — the same rows it wrote, so a row the disk
// refused still counts. Nothing in them is cancelled by ctx; a cancel that comes
// while they run is honoured once they have written what was measured
// (cancelledAfterItems).
func (r *run) afterItems(runCtx context.Context, d *dispatch.Result, meta *logdir.Meta, o *ordered, exp *expansion) {
	ctx := context.WithoutCancel(runCtx)
	r.res.Cancelled = d.Cancelled
	r.res.Quarantined = d.Quarantined
	r.res.Stop = d.Stop
	r.res.Internal = d.Panic
	r.res.Rerun = meta.Rerun
	meta.Wall = d.Wall.Seconds()
	meta.Finished = true
	meta.Cancelled = d.Cancelled
	meta.Quarantined = d.Quarantined
	meta.Unfit = d.Unfit
	meta.Stop = d.Stop
	r.writeMeta(meta)

	// Phase 5: verdicts.
	run := &logdir.Run{Layout: r.layout, Meta: *meta, Queue: o.queueRows}
	for _, a := range d.Attempts {
		run.Timings = append(run.Timings, a.Row)
	}
	r.verdicts(run)
	r.saveRerun(exp, meta.Arch, r.res.Suites, r.dispatchItems(o.plan, exp))

	// Phase 6: learn.
	r.obs.Phase(6, "learn the weights")
	meta.Changes, meta.Pruned = r.learn(ctx, o.store, o.pool, run, exp)
	run.Meta = *meta
	r.writeMeta(meta)

	// Phase 7: report.
	r.report(ctx, run, meta)
	if runCtx.Err() != nil && !d.Cancelled {
		r.cancelledAfterItems(meta)
	}

	// Phase 8: failures and exit code.
	r.obs.Phase(8, "summary")
	r.summary()
}

// cancelledAfterItems records a cancel (a signal) that came after every item had
// ended, while phases 5–7 wrote the verdicts, the weights and the report: those are
// written in full, and the run is a cancelled one (exit 130 when no item failed,
// never 0: docs/exit-codes.md), as run.json then says.
func (r *run) cancelledAfterItems(meta *logdir.Meta) {
	r.res.Cancelled, meta.Cancelled = true, true
	r.warn("the run was cancelled after its items ended: the verdicts, weights and report of what was measured are written")
	r.writeMeta(meta)
}

// stoppedBeforeItems ends a run cancelled during listing (phase 1) or setup (phase
// 3): every suite still gets its verdict files (each item, or the suite when its
// items were never listed, "cancelled"), the report says so, nothing is learned,
// and the exit code is exitcode.Interrupted.
func (r *run) stoppedBeforeItems(ctx context.Context, phase int, suites []config.Suite, pool gpu.Pool, queueRows []logdir.QueueRow) (*Result, error) {
	ctx = context.WithoutCancel(ctx)
	what := map[int]string{1: "while listing the suites' items (phase 1)", 3: "during setup (phase 3)"}[phase]
	meta := r.meta(suites, pool)
	meta.Finished, meta.Cancelled = true, true
	meta.Stop = &logdir.Stop{Reason: outcome.StopCancelled, Message: "the run was cancelled " + what + ", before any item ran", Phase: phase}
	r.res.Cancelled, r.res.Stop = true, meta.Stop
	r.warn(meta.Stop.Message)
	if phase == 1 {
		// No queue was written: an empty one keeps the log dir a run that
		// `sgpu-queue report` can rebuild.
		if err := os.WriteFile(r.layout.QueueTSV(), nil, 0o644); err != nil {
			r.warn(fmt.Sprintf("%s: %v", r.layout.QueueTSV(), err))
		}
	}
	r.writeMeta(meta)
	run := &logdir.Run{Layout: r.layout, Meta: *meta, Queue: queueRows}
	r.verdicts(run)
	r.obs.Phase(6, "learn the weights")
	r.printf("  nothing ran: the weight table is left as it is\n")
	r.report(ctx, run, meta)
	r.obs.Phase(8, "summary")
	r.summary()
	return r.res, nil
}

// stoppedOnSuite ends a run whose suite's listing (phase 1) or setup (phase 3)
// failed: exit 1 with the error, as before, and run.json records why (the typed
// reason, the suite, the message), finished, so that the log dir stays a run that
// report and merge read (docs/runners.md: merge fails that suite with this
// reason). In phase 1 it also writes the empty queue and a shard's plan copy, which
// phase 2 would have written. An error of no suite's is returned as it is.
func (r *run) stoppedOnSuite(phase int, suites []config.Suite, pool gpu.Pool, err error) error {
	failed := &exitcode.Error{Code: exitcode.Failed, Err: err}
	stop := suiteStop(err, phase)
	if stop == nil || r.o.DryRun {
		return failed
	}
	if phase == 1 {
		if werr := atomicfile.Write(r.layout.QueueTSV(), nil, 0o644); werr != nil {
			r.lost("the empty queue", r.layout.QueueTSV(), werr)
		}
		if r.shard != nil && r.shard.raw != nil {
			if werr := atomicfile.Write(r.layout.PlanJSON(), r.shard.raw, 0o644); werr != nil {
				r.lost("the plan's copy", r.layout.PlanJSON(), werr)
			}
		}
	}
	meta := r.meta(suites, pool)
	meta.Finished, meta.Stop = true, stop
	r.writeMeta(meta)
	return failed
}

// suiteStop is the stop record of a suite's failed listing or setup, or of the
// failed --before (onceStop); nil for an
// error that is no suite's.
func suiteStop(err error, phase int) *logdir.Stop {
	var le *expand.Error
	var se *setupError
	switch {
	case errors.As(err, &le):
		return &logdir.Stop{Reason: outcome.StopListingFailed, Phase: phase, Suite: le.Suite.Label, Message: stopMessage(le.Error(), le.Tail)}
	case errors.As(err, &se):
		return &logdir.Stop{Reason: outcome.StopSetupFailed, Phase: phase, Suite: se.label, Message: stopMessage(se.Error(), se.tail)}
	}
	return onceStop(err)
}

// stopMessage is a failed suite's reason in one line, as run.json keeps it: the
// error's first line and the last line its command printed (the cause, mostly).
func stopMessage(msg, tail string) string {
	first, _, _ := strings.Cut(msg, "\n")
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		first += "; last output: " + last
	}
	// The tail is a suite's output: no terminal escapes or control bytes reach
	// run.json, the console or the report from it.
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(textfmt.StripANSI(first), "?"))
}

// verdicts is phase 5: each suite's verdict files, and one console line per suite.
func (r *run) verdicts(run *logdir.Run) {
	r.obs.Phase(5, "per-suite verdicts")
	r.res.Suites = verdict.Decide(run)
	for _, s := range r.res.Suites {
		v := "ok"
		switch {
		case s.Skip != "":
			v = s.Skip.Line()
		case s.Broken != "":
			v = s.BrokenLine()
		case s.Unlisted:
			v = fmt.Sprintf("FAIL rc=%d (cancelled before its items were listed)", s.RC)
		case !s.Passed():
			v = fmt.Sprintf("FAIL rc=%d (%d of %d items failed)", s.RC, s.Failed, len(s.Items))
		}
		// One suite at a time, so that the console says which verdicts a full disk
		// kept from being written.
		if err := verdict.Write(r.layout, []verdict.Suite{s}); err != nil {
			r.lost(fmt.Sprintf("the verdict of suite %q", s.Label), r.layout.SuiteRC(s.LogFile), err)
			r.printf("  %-12s %s  (verdict NOT written)\n", s.Label, v)
			continue
		}
		r.printf("  %-12s %s  → %s\n", s.Label, v, r.rel(r.layout.SuiteRC(s.LogFile)))
	}
}

// report is phase 7: the merged JUnit per suite, then the report.
func (r *run) report(ctx context.Context, run *logdir.Run, meta *logdir.Meta) {
	r.obs.Phase(7, "report")
	since := run.Meta.Started
	if since.IsZero() {
		since = time.Now() // no item ran: no XML of this run can exist
	}
	// The merged JUnit first, recorded in run.json: the report shows each failed
	// item's test cases from it (docs/report.md).
	r.mergeJUnit(ctx, since)
	r.recordJUnit(meta)
	run.Meta = *meta
	r.res.Stats = report.Compute(run, r.res.Suites)
	r.writeReport(run)
}

func (r *run) rel(p string) string {
	if rel, err := filepath.Rel(r.o.RepoRoot, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

func (r *run) weightsPath(arch string) string {
	if r.o.WeightsPath != "" {
		return r.o.WeightsPath
	}
	return weights.DefaultPath(r.o.RepoRoot, arch, r.o.Level)
}

// loadTable chooses the weight table's store for arch and loads it; a table that
// cannot be loaded is an empty one, with a warning saying so and what follows
// (without).
func (r *run) loadTable(ctx context.Context, arch, without string) (weights.Store, *weights.Table) {
	store := r.store(arch)
	r.weights = store
	r.res.Weights, r.res.WeightsFile = store.String(), r.weightsPath(arch)
	table, warns, err := store.Load(ctx)
	for _, w := range warns {
		r.warn(w)
	}
	var unread *weights.UnreadableError
	if errors.As(err, &unread) {
		// Its keys are not this run's to drop: saveLearned leaves it as it is.
		r.unread = unread
		r.warn(fmt.Sprintf("%v; %s, and it will NOT be written: the keys it holds are kept (make it readable, or remove it)", unread, without))
		return store, weights.New()
	}
	if err != nil || table == nil {
		r.warn(fmt.Sprintf("weight table %s could not be loaded, %s: %v", store, without, err))
		table = weights.New()
	}
	return store, table
}

func (r *run) store(arch string) weights.Store {
	path := r.weightsPath(arch)
	if r.o.Store != nil {
		return r.o.Store(arch, r.o.Level, path)
	}
	return weights.File{Path: path}
}

// meta is run.json as phase 4 starts; Weights names the store phase 2 chose and
// loaded ("" when the run stopped before it).
func (r *run) meta(suites []config.Suite, pool gpu.Pool) *logdir.Meta {
	m := r.claim(suites, pool)
	m.Format = logdir.FormatOutcomes
	m.DefaultWeight = r.o.DefaultWeight
	if r.weights != nil {
		// After its Load: it may say where the table came from. A file under the repo
		// root is named relative to it: the report shows no runner's path.
		m.Weights = r.rel(r.weights.String())
	}
	m.Retries, m.FlakyIsFailure, m.TimeoutFactor, m.Policy = r.o.Retries, r.o.FlakyIsFailure, r.o.Timeout.Factor, r.policy
	r.markNotRerun(m)
	return m
}

// claim is queue/run.json from phase 0 until phase 4 writes the rest: it marks the
// log dir as this tool's and records the suites whose files a next run may delete.
func (r *run) claim(suites []config.Suite, pool gpu.Pool) *logdir.Meta {
	m := &logdir.Meta{Tool: logdir.ToolName, GPUs: pool.IDs, PinVar: pool.PinVar, Arch: pool.Arch, Level: r.o.Level,
		Shard: r.shardRecord(suites), Roots: r.roots(), ForeignCwd: r.foreignCwd}
	for _, s := range suites {
		m.Suites = append(m.Suites, logdir.MetaSuite{Label: s.Label, LogFile: s.LogFile, Mode: string(s.Mode)})
	}
	for _, s := range r.unselected {
		m.Suites = append(m.Suites, logdir.MetaSuite{Label: s.Label, LogFile: s.LogFile, Mode: string(s.Mode), Skip: outcome.NotSelected})
	}
	return m
}

// roots are the repo root and, with a target container, its path there (run.json's
// roots).
func (r *run) roots() []string {
	roots := []string{r.o.RepoRoot}
	if p, err := r.mapPath(r.o.RepoRoot); err == nil && p != r.o.RepoRoot {
		roots = append(roots, p)
	}
	return roots
}

// logDirError is the one-line error of a log dir the run cannot claim: another run
// holds it, it holds someone else's files (both say so and the fix), or it cannot be
// written.
func logDirError(face optname.Face, dir string, err error) error {
	var busy *logdir.BusyError
	var foreign *logdir.NotOursError
	switch {
	case errors.As(err, &busy):
		busy.Face = face
		return err
	case errors.As(err, &foreign):
		foreign.Face = face
		return err
	}
	return fmt.Errorf("log dir %s is not writable: %w; give a writable %s", dir, err, face.Name("log-dir"))
}

func (r *run) writeMeta(m *logdir.Meta) {
	if err := r.layout.WriteMeta(m); err != nil {
		r.lost("the run's record", r.layout.Meta(), err)
	}
}

// lost warns that a file of the run (what, at path) was not written, a full disk
// most likely, and keeps its path for the summary, so that nothing claims it was.
// A file that fails twice (run.json) is warned about once.
func (r *run) lost(what, path string, err error) {
	rel := r.rel(path)
	if slices.Contains(r.res.NotWritten, rel) {
		return
	}
	r.res.NotWritten = append(r.res.NotWritten, rel)
	var ae *atomicfile.Error
	if errors.As(err, &ae) {
		err = ae.Err // the path is said already
	}
	r.warn(fmt.Sprintf("%s NOT written (%s): %v", rel, what, err))
}

type plainObserver struct{ w io.Writer }

func (p plainObserver) Phase(n int, title string) { fmt.Fprintf(p.w, "== phase %d: %s\n", n, title) }
func (p plainObserver) Warn(msg string)           { fmt.Fprintf(p.w, "warning: %s\n", msg) }

// syncObserver serializes the calls to the face's Observer: the dispatch workers
// and the executors' leftover-process notes warn at once, and an Observer keeps
// counts (the action's: annotations made, warnings past the limit).
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

// syncWriter serializes the writes of the engine's console, which the phases'
// goroutines (and the dispatch workers' warnings) share.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
