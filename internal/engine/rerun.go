package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// rerunning is a run narrowed to what failed the last attempt (docs/reruns.md).
type rerunning struct {
	record.Rerun
	failed map[record.ItemID]bool // the queued items of the failed lists
	suites map[string]bool        // the labels with an item queued
}

// rerunState is what a run knows of the re-run state (docs/reruns.md#keys).
type rerunState struct {
	code   string
	prior  map[string]*rerun.Prior
	listed map[record.ItemID]bool // the items this run listed (a shard's own), before narrowing
}

func (r *run) rerunFiles(queue, arch string) rerun.Files {
	key := rerun.StateKey{Queue: queue, Arch: arch, Level: r.o.Target.Level, Code: r.reruns.code}
	return rerun.Files{Root: r.o.Target.RepoRoot, StateKey: key}
}

// runQueues are the TE queues of suites (config.Suite.Queue), each once, sorted.
func runQueues(suites map[string]config.Suite) []string {
	var qs []string
	for _, s := range suites {
		if !slices.Contains(qs, s.Queue()) {
			qs = append(qs, s.Queue())
		}
	}
	slices.Sort(qs)
	return qs
}

// prepareRerun names the code this run tests and refuses any non-regular file
// where the run will write its state (docs/reruns.md#links).
func (r *run) prepareRerun(ctx context.Context, suites []config.Suite, arch string) error {
	sha, _ := hook.Env(r.o.Target.Env).Get("GITHUB_SHA")
	code, err := rerun.Code(ctx, r.o.Target.RepoRoot, sha, r.stateDirs(arch))
	if err != nil {
		r.warn(fmt.Sprintf("the code this run tests is not known (%v): the re-run state is keyed without it, "+
			"as outside a git checkout; set GITHUB_SHA to the commit to key it", err))
	}
	r.reruns = &rerunState{code: code, prior: map[string]*rerun.Prior{}}
	if r.o.DryRun {
		return nil
	}
	m := map[string]config.Suite{}
	for _, s := range suites {
		m[s.Label] = s
	}
	for _, q := range runQueues(m) {
		if err := r.checkRerunPaths(r.rerunFiles(q, arch)); err != nil {
			return err
		}
	}
	return nil
}

// stateDirs are the folders the tool writes its state in, relative to the repo
// root, so the code's diff leaves them out.
func (r *run) stateDirs(arch string) []string {
	var out []string
	root := r.o.Target.RepoRoot
	for _, p := range []string{filepath.Join(root, rerun.Dir), filepath.Dir(r.o.Weights.TablePath(root, arch, r.o.Target.Level)),
		r.o.LogDir, r.junitDir(), r.junitPrefix()} {
		if p == "" {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != "." && filepath.IsLocal(rel) && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// checkRerunPaths refuses what the run would write through in a queue's state.
func (r *run) checkRerunPaths(f rerun.Files) error {
	errs := []error{safefs.Check(f.Root, f.Failed()), safefs.Check(f.Root, f.State()), safefs.CheckDir(f.Root, f.TestsDir())}
	if errs[2] == nil {
		es, _ := os.ReadDir(f.TestsDir())
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".txt") && !e.Type().IsRegular() {
				errs = append(errs, safefs.Check(f.Root, filepath.Join(f.TestsDir(), e.Name())))
			}
		}
	}
	for _, err := range errs {
		if errors.As(err, new(*safefs.Error)) {
			return usage(r.stateError(err))
		}
		if err != nil {
			return usage(fmt.Errorf("re-run state %s: %w", r.rel(f.QueueDir()), err))
		}
	}
	return nil
}

// readPrior reads queue q's failed list and record; state this run does not trust
// is ignored with a notice.
func (r *run) readPrior(q, arch string) *rerun.Prior {
	f := r.rerunFiles(q, arch)
	p, notice, err := rerun.Load(f)
	switch {
	case err != nil:
		r.warn(fmt.Sprintf("%v; running everything", err))
	case notice != "" && len(p.Failed) > 0 && !r.o.Full:
		r.printf("  re-run: %s is not this run's (%s): running everything\n", r.rel(f.Failed()), notice)
	}
	if notice != "" {
		return &rerun.Prior{}
	}
	return p
}

// narrow starts phase 2 on a re-run: it keeps the items the failed lists name and
// those not yet run (unrun); a list that names none, or cannot be read, runs
// everything with a warning.
func (r *run) narrow(e *expansion, arch string) {
	r.reruns.listed = map[record.ItemID]bool{}
	for _, it := range e.items {
		r.reruns.listed[it.ItemID] = true
	}
	var failed, others []record.ItemID
	var lists []string
	for _, q := range runQueues(e.suites) {
		p := r.readPrior(q, arch)
		r.reruns.prior[q] = p
		if len(p.Failed) > 0 {
			lists = append(lists, r.rel(r.rerunFiles(q, arch).Failed()))
		}
		for _, k := range p.Failed {
			if r.owns(q, k) {
				failed = append(failed, k)
			} else {
				others = append(others, k)
			}
		}
	}
	if r.o.Full {
		return
	}
	if len(others) > 0 {
		r.printf("  re-run: left in the list for the runs that have them (another %s, another shard): %s\n",
			r.o.Face.Name("suites"), keyList(others))
	}
	if len(failed) == 0 {
		return
	}
	queued := make([]record.ItemID, len(e.items))
	for i, it := range e.items {
		queued[i] = it.ItemID
	}
	n := rerun.Narrow(failed, queued)
	if !n.Narrowed() {
		r.warn(fmt.Sprintf("none of the %d item(s) that failed the last attempt (%s) is in this run's queue: running everything",
			n.Failed, strings.Join(lists, ", ")))
		return
	}
	rr := &rerunning{Rerun: record.Rerun{Failed: n.Failed, Lists: lists}, failed: n.Keep, suites: map[string]bool{}}
	unrun := r.unrun(e, n, rr)
	e.items = r.narrowItems(e, arch, n, unrun, rr)
	r.printf("  re-run: %d item(s) failed the last attempt (%s); queueing the %d of them this run has, %d narrowed to their failed tests\n",
		n.Failed, strings.Join(lists, ", "), rr.Queued, rr.Narrowed)
	if len(unrun) > 0 {
		r.printf("  re-run: queueing too the %d item(s) no earlier run of this key ran (another %s, another queue, new): %s\n",
			len(unrun), r.o.Face.Name("suites"), keyList(unrun))
	}
	if len(n.Missing) > 0 {
		r.printf("  re-run: not in this run's queue (gone, or not run here): %s\n", keyList(n.Missing))
	}
	r.rerun = rr
}

// narrowItems keeps the items of n, each marked with its tests file when the record
// vouches for it, else whole, and the items of unrun, whole.
func (r *run) narrowItems(e *expansion, arch string, n rerun.Narrowing, unrun []record.ItemID, rr *rerunning) []expand.Item {
	whole := make(map[record.ItemID]bool, len(unrun))
	for _, k := range unrun {
		whole[k] = true
	}
	var kept []expand.Item
	for _, it := range e.items {
		k := it.ItemID
		if !n.Keep[k] && !whole[k] {
			continue
		}
		it.Narrowed = true
		rr.suites[it.Label] = true
		if n.Keep[k] {
			rr.Queued++
			if it.OnlyTests, it.Only = r.failedTests(e, arch, k); it.OnlyTests != "" {
				rr.Narrowed++
			}
		}
		kept = append(kept, it)
	}
	rr.Unrun = len(unrun)
	return kept
}

// failedTests is the tests file of failed item k and the tests in it, as the last
// attempt wrote them; "" when it re-runs whole.
func (r *run) failedTests(e *expansion, arch string, k record.ItemID) (string, []string) {
	q := e.suites[k.Label].Queue()
	f := r.rerunFiles(q, arch).Tests(k)
	data, err := safefs.ReadFile(f)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0:
		return "", nil
	case err != nil:
		r.warn(fmt.Sprintf("re-run: %v; %s runs whole", err, textfmt.Printable(k.Key())))
		return "", nil
	}
	if st := r.reruns.prior[q].State; st != nil && !st.TestsKept(rerun.TestsName(k), data) {
		r.printf("  re-run: %s re-runs whole: %s is not the tests file the last attempt wrote "+
			"(a run of another level or arch rewrote it)\n", textfmt.Printable(k.Key()), r.rel(f))
		return "", nil
	}
	return f, rerun.Lines(data)
}

// unrun are the items no failed list names that a re-run still runs whole: those
// whose outcome the state lacks or holds as failed. A shard carries each item it
// skips into rr.Carried, so merge sees each once
// (docs/runners.md#re-running-a-failed-shard).
func (r *run) unrun(e *expansion, n rerun.Narrowing, rr *rerunning) []record.ItemID {
	known := map[record.ItemID]record.Carried{}
	byList := map[string]bool{}
	for q, p := range r.reruns.prior {
		byList[q] = p.ByList && r.shard == nil
		if p.State != nil {
			for _, c := range p.State.Items {
				known[c.ItemID] = c
			}
		}
	}
	var unrun []record.ItemID
	for _, it := range e.items {
		k := it.ItemID
		c, ok := known[k]
		switch {
		case n.Keep[k]:
		case ok && !c.Failed && r.shard != nil:
			rr.Carried = append(rr.Carried, c)
		case ok && !c.Failed || byList[e.suites[k.Label].Queue()]:
		default:
			unrun = append(unrun, k)
		}
	}
	return unrun
}

// owns reports whether this run speaks for item k of queue q's state; an item of no
// configured suite is gone, and owned, so the run drops it.
func (r *run) owns(q string, k record.ItemID) bool {
	s, known := r.res.Configs[k.Label]
	if known && s.Queue() == q && slices.ContainsFunc(r.unselected, func(u config.Suite) bool { return u.Label == k.Label }) {
		return false
	}
	return r.shard == nil || r.shard.Of(k.Key()) == r.shard.Shard
}

// keyList names keys, the first few of them.
func keyList(keys []record.ItemID) string {
	const show = 5
	var names []string
	for i, k := range keys {
		if i == show {
			names = append(names, fmt.Sprintf("and %d more", len(keys)-show))
			break
		}
		names = append(names, textfmt.Printable(k.Key()))
	}
	return strings.Join(names, ", ")
}

// markNotRerun gives the suites of a re-run that have no item queued their
// passing "not re-run this attempt" verdict (outcome.NotRerun).
func (r *run) markNotRerun(m *record.Meta) {
	if r.rerun == nil {
		return
	}
	m.Rerun = &r.rerun.Rerun
	for i := range m.Suites {
		if s := &m.Suites[i]; s.Skip == "" && !r.rerun.suites[s.Label] {
			s.Skip = outcome.NotRerun
		}
	}
}

// countRan records how many of a re-run's queued items started: a stopped run starts
// fewer than it queued.
func (r *run) countRan(m *record.Meta, d *dispatch.Result) {
	if m.Rerun == nil {
		return
	}
	ran := map[record.ItemID]bool{}
	for _, a := range d.Attempts {
		if r.rerun.failed[a.ItemID] {
			ran[a.ItemID] = true
		}
	}
	m.Rerun.Ran = len(ran)
}

// printSkipped names, in the summary, the suites that did not run and pass, and
// says when the run was a re-run.
func (r *run) printSkipped() {
	left := map[outcome.Skip][]string{}
	for _, s := range r.res.Suites {
		if s.Skip != "" {
			left[s.Skip] = append(left[s.Skip], s.Label)
		}
	}
	if l := left[outcome.NotSelected]; len(l) > 0 {
		r.printf("not selected (%s), not run, passing: %s\n", r.o.Face.Name("suites"), strings.Join(l, ", "))
	}
	if l := left[outcome.NotRerun]; len(l) > 0 {
		r.printf("not re-run this attempt (nothing of theirs failed the last one), passing: %s\n", strings.Join(l, ", "))
	}
	if rr := r.res.Rerun; rr != nil {
		stopped := ""
		if rr.Ran < rr.Queued {
			stopped = fmt.Sprintf("; %d queued never started: the run stopped first", rr.Queued-rr.Ran)
		}
		unrun := ""
		if rr.Unrun > 0 {
			unrun = fmt.Sprintf(", and the %d no earlier run of this key ran", rr.Unrun)
		}
		r.printf("a re-run: %d of the %d item(s) that failed the last attempt ran again%s (%s runs everything%s)\n",
			rr.Ran, rr.Failed, unrun, r.o.Face.Enable("full"), stopped)
	}
}
