package engine

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// rerunning is a run narrowed to what failed the last attempt (docs/reruns.md).
type rerunning struct {
	record.Rerun
	suites map[string]bool        // the labels with an item queued
	tests  map[rerun.Key]string   // each narrowed item's tests file, "" for none
	only   map[rerun.Key][]string // the tests in it, read once as the run narrows
}

// rerunFiles names the re-run state of one TE queue for this run's arch and level.
func (r *run) rerunFiles(queue, arch string) rerun.Files {
	return rerun.Files{Root: r.o.RepoRoot, Queue: queue, Arch: arch, Level: r.o.Level}
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

// narrow is the start of phase 2 on a re-run: when the failed lists of the run's
// queues name items this run has, only those stay queued (every suite was still
// listed and censused in phase 1). A list that names none of them runs everything,
// with a warning; a list that cannot be read too. --full ignores the lists.
func (r *run) narrow(e *expansion, arch string) {
	if r.o.Full {
		return
	}
	var failed []rerun.Key
	var lists []string
	for _, q := range runQueues(e.suites) {
		path := r.rerunFiles(q, arch).Failed()
		keys, err := rerun.ReadFailed(path)
		if err != nil {
			r.warn(fmt.Sprintf("%v; running everything", err))
			return
		}
		if len(keys) > 0 {
			lists = append(lists, r.rel(path))
		}
		for _, k := range keys {
			// A list names its own queue's items; a suite of the other queue with
			// that label is not the one that failed.
			if s, ok := e.suites[k.Label]; !ok || s.Queue() == q {
				failed = append(failed, k)
			}
		}
	}
	if len(failed) == 0 {
		return
	}
	queued := make([]rerun.Key, len(e.items))
	for i, it := range e.items {
		queued[i] = rerun.Key{Label: it.Label, Tag: it.Tag}
	}
	n := rerun.Narrow(failed, queued)
	if !n.Narrowed() {
		r.warn(fmt.Sprintf("none of the %d item(s) that failed the last attempt (%s) is in this run's queue: running everything",
			n.Failed, strings.Join(lists, ", ")))
		return
	}
	rr := &rerunning{Rerun: record.Rerun{Failed: n.Failed, Lists: lists}, suites: map[string]bool{}, tests: map[rerun.Key]string{},
		only: map[rerun.Key][]string{}}
	var kept []schedule.Item
	for _, it := range e.items {
		k := rerun.Key{Label: it.Label, Tag: it.Tag}
		if !n.Keep[k] {
			continue
		}
		kept = append(kept, it)
		rr.suites[it.Label] = true
		f := r.rerunFiles(e.suites[it.Label].Queue(), arch).Tests(k)
		if !nonEmptyFile(f) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			r.warn(fmt.Sprintf("re-run: %v; %s runs whole", err, textfmt.Printable(k.String())))
			continue
		}
		rr.tests[k], rr.only[k] = f, rerun.Lines(data)
		rr.Narrowed++
	}
	rr.Queued = len(kept)
	r.printf("  re-run: %d item(s) failed the last attempt (%s); queueing the %d of them this run has, %d narrowed to their failed tests\n",
		n.Failed, strings.Join(lists, ", "), rr.Queued, rr.Narrowed)
	if len(n.Missing) > 0 {
		r.printf("  re-run: not in this run's queue (gone, or not run here): %s\n", keyList(n.Missing))
	}
	e.items = kept
	r.rerun = rr
}

// nonEmptyFile reports whether path is a regular file with something in it.
func nonEmptyFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// keyList names keys, the first few of them.
func keyList(keys []rerun.Key) string {
	const show = 5
	var names []string
	for i, k := range keys {
		if i == show {
			names = append(names, fmt.Sprintf("and %d more", len(keys)-show))
			break
		}
		names = append(names, textfmt.Printable(k.String()))
	}
	return strings.Join(names, ", ")
}

// narrowItem marks a dispatch item of a re-run with its tests file (none: it re-runs
// whole) and the tests in it; its adapter's command selects them (adapter.Run: a
// list item's script reads the file through the hook's only-tests variable, a
// tool's item is given the tests).
func (r *run) narrowItem(it *dispatch.Item) {
	if r.rerun == nil {
		return
	}
	k := rerun.Key{Label: it.Label, Tag: it.Tag}
	it.Narrowed, it.OnlyTests, it.Only = true, r.rerun.tests[k], r.rerun.only[k]
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

// saveRerun writes what the next attempt re-runs, after the verdicts of a run
// whose items ran: each queue's failed list (empty when nothing failed) and, for a
// failed list item whose failed tests can be named, its tests file. Every queued
// item's old tests file is removed first, so none outlives the reason it was
// written. A shard writes its own (each leg re-runs its own failures).
func (r *run) saveRerun(e *expansion, arch string, suites []verdict.Suite, dispatched []dispatch.Item) {
	failed := map[string][]rerun.Key{}
	for _, it := range verdict.FailedItems(suites) {
		s := e.suites[it.Label]
		failed[s.Queue()] = append(failed[s.Queue()], rerun.Key{Label: it.Label, Tag: it.Tag})
	}
	for _, q := range runQueues(e.suites) {
		f := r.rerunFiles(q, arch)
		if err := rerun.WriteFailed(f.Failed(), failed[q]); err != nil {
			r.lost("the re-run list", f.Failed(), err)
		}
	}
	failedKeys := map[rerun.Key]bool{}
	for _, keys := range failed {
		for _, k := range keys {
			failedKeys[k] = true
		}
	}
	prefix, suffix := r.junitPrefix(), r.junitSuffix()
	for _, it := range dispatched {
		k := rerun.Key{Label: it.Label, Tag: it.Tag}
		f := r.rerunFiles(it.Suite.Queue(), arch)
		path := f.Tests(k)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(path); err != nil {
				r.warn(fmt.Sprintf("%s: %v", r.rel(path), err))
			}
		}
		if !failedKeys[k] || it.Tag == "" { // an untagged item (opaque) is its whole suite
			continue
		}
		r.saveTests(it, path, dispatch.JUnitFile(prefix, suffix, it))
	}
}

// saveTests writes one failed item's tests file, or says why it re-runs whole.
func (r *run) saveTests(it dispatch.Item, path, junitFile string) {
	key := rerun.Key{Label: it.Label, Tag: it.Tag}
	if junitFile == "" {
		r.printf("  re-run: %s re-runs whole: it has no JUnit file to name its tests\n", textfmt.Printable(key.String()))
		return
	}
	ev, err := rerun.ReadSidecars(junitFile)
	if err != nil {
		r.printf("  re-run: %s re-runs whole: %v\n", textfmt.Printable(key.String()), err)
		return
	}
	r.junitEvidence(it, junitFile, &ev)
	tests, why := rerun.Tests(ev)
	if tests == nil {
		r.printf("  re-run: %s re-runs whole: %s\n", textfmt.Printable(key.String()), why)
		return
	}
	if err := writeLines(path, tests); err != nil {
		r.lost("the re-run tests of "+textfmt.Printable(key.String()), path, err)
		return
	}
	r.printf("  re-run: %s re-runs %d test(s) → %s\n", textfmt.Printable(key.String()), len(tests), r.rel(path))
}

// junitEvidence adds what the item's own JUnit file says to ev: how many tests it
// has and the ids of those that failed, as the next attempt selects them, named by
// its adapter (adapter.Narrower). When a failed test cannot be named, no id is
// given: the item re-runs whole; an adapter that cannot narrow (a cmd line) gives
// nothing.
func (r *run) junitEvidence(it dispatch.Item, junitFile string, ev *rerun.Evidence) {
	n, ok := it.Adapter.(adapter.Narrower)
	if !ok {
		return
	}
	// An error gives no count: rerun.Tests refuses to narrow without one.
	if ids, total, err := n.TestIDs(it.Unit, junitFile); err == nil {
		ev.JUnitFailed, ev.Total = ids, total
	}
}

// writeLines replaces path with one line per entry.
func writeLines(path string, lines []string) error {
	return atomicfile.Write(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
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
		r.printf("a re-run: %d of the %d item(s) that failed the last attempt ran again (%s runs everything)\n",
			rr.Queued, rr.Failed, r.o.Face.Enable("full"))
	}
}
