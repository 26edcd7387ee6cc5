package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// saveRerun writes what the next attempt re-runs, after the verdicts of a run
// whose items ran: per queue, the failed list (empty when nothing failed), the
// record of its key beside it, and for a failed list item whose failed tests can
// be named, its tests file. A run rewrites only what it ran (rerun.Next): the
// entries of suites it did not select, or of another shard, stay. Every queued
// item's old tests file is removed first, so none outlives the reason it was
// written.
func (r *run) saveRerun(ctx context.Context, e *expansion, arch string, suites []verdict.Suite, dispatched []expand.Item) {
	items := map[string][]verdict.Item{}
	for _, s := range suites {
		for _, it := range s.Items {
			q := e.suites[it.Label].Queue()
			items[q] = append(items[q], it)
		}
	}
	for _, q := range runQueues(e.suites) {
		r.saveQueue(ctx, q, arch, items[q], dispatched)
	}
}

// saveQueue writes queue q's state from the verdicts of its items: its list, the
// tests files of its failed items, then the record of their key and digests. It
// reads the state again and rewrites it under a lock on the queue's folder, so
// that a run that saved since this one read it in phase 2 (another --suites, another
// shard, at once in this checkout) keeps what it wrote.
func (r *run) saveQueue(ctx context.Context, q, arch string, items []verdict.Item, dispatched []expand.Item) {
	f := r.rerunFiles(q, arch)
	if err := safefs.MkdirAll(f.Root, f.QueueDir()); err != nil {
		r.lost("the re-run list", f.Failed(), err)
		return
	}
	release, err := safefs.LockDir(ctx, "the re-run state", f.QueueDir(), 0)
	if err != nil {
		r.lost("the re-run list", f.Failed(), err)
		return
	}
	defer release()
	p, notice, err := rerun.Load(f)
	if err != nil || notice != "" {
		p = &rerun.Prior{} // another key's, or none to keep
	}
	keys, st := rerun.Next(p.State, p.Failed, rerun.Ran{
		Owns:   func(k record.ItemID) bool { return r.owns(q, k) },
		Listed: func(k record.ItemID) bool { return r.reruns.listed[k] },
		Items:  items,
	})
	st.StateKey = f.StateKey
	list := logdir.FormatItems(keys) // TE's failed list: empty when nothing failed
	st.Failed = rerun.Digest(list)
	if err := rerun.WriteFile(f.Root, f.Failed(), list); err != nil {
		r.lost("the re-run list", f.Failed(), err)
	}
	isFailed := map[record.ItemID]bool{}
	for _, it := range items {
		isFailed[it.ItemID] = it.Failed
	}
	prefix, suffix := r.junitPrefix(), r.junitSuffix()
	for _, it := range dispatched {
		k := it.ItemID
		if it.Suite.Queue() != q {
			continue
		}
		path := f.Tests(k)
		if err := rerun.RemoveFile(f.Root, path); err != nil {
			r.lost("the old re-run tests of "+textfmt.Printable(k.Key())+" could not be removed", path, err)
			continue
		}
		if !isFailed[k] || it.Tag == "" { // an untagged item (opaque) is its whole suite
			continue
		}
		if data := r.saveTests(it, path, dispatch.JUnitFile(prefix, suffix, it)); data != nil {
			st.Tests[rerun.TestsName(k)] = rerun.Digest(data)
		}
	}
	if err := rerun.WriteFile(f.Root, f.State(), rerun.FormatState(st)); err != nil {
		r.lost("the re-run state's record", f.State(), err)
	}
}

// saveTests writes one failed item's tests file and returns what it wrote, or
// says why the item re-runs whole (nil).
func (r *run) saveTests(it expand.Item, path, junitFile string) []byte {
	key := it.ItemID
	if junitFile == "" {
		r.printf("  re-run: %s re-runs whole: it has no JUnit file to name its tests\n", textfmt.Printable(key.Key()))
		return nil
	}
	ev, err := rerun.ReadSidecars(junitFile)
	if err != nil {
		r.printf("  re-run: %s re-runs whole: %v\n", textfmt.Printable(key.Key()), err)
		return nil
	}
	r.junitEvidence(it, junitFile, &ev)
	tests, why := rerun.Tests(ev)
	if tests == nil {
		r.printf("  re-run: %s re-runs whole: %s\n", textfmt.Printable(key.Key()), why)
		return nil
	}
	data := []byte(strings.Join(tests, "\n") + "\n")
	if err := rerun.WriteFile(r.o.Target.RepoRoot, path, data); err != nil {
		r.lost("the re-run tests of "+textfmt.Printable(key.Key()), path, err)
		return nil
	}
	r.printf("  re-run: %s re-runs %d test(s) → %s\n", textfmt.Printable(key.Key()), len(tests), r.rel(path))
	return data
}

// junitEvidence adds what the item's own JUnit file says to ev: how many tests it
// has and the ids of those that failed, as the next attempt selects them, named by
// its adapter (adapter.Narrower). When a failed test cannot be named, no id is
// given: the item re-runs whole (with the reason, when its name cannot be a line of
// a tests file); an adapter that cannot narrow (a cmd line) gives nothing.
func (r *run) junitEvidence(it expand.Item, junitFile string, ev *rerun.Evidence) {
	n, ok := it.Adapter.(adapter.Narrower)
	if !ok {
		return
	}
	ids, total, err := n.TestIDs(it.Unit, junitFile)
	var notALine *adapter.NotALineError
	switch {
	case err == nil:
		ev.JUnitFailed, ev.Total = ids, total
	case errors.As(err, &notALine):
		ev.Unnamed, ev.Total = notALine.Error(), total
	}
	// Any other error gives no count: rerun.Tests refuses to narrow without one.
}
