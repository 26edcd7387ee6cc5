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

// saveRerun writes what the next attempt re-runs (docs/reruns.md). Every queued
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

// saveQueue writes queue q's state from its items' verdicts, re-read and rewritten
// under a lock on the queue's folder, so that a run that saved since this one read
// it keeps what it wrote.
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
		if err := safefs.Remove(f.Root, path); err != nil {
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

// junitEvidence adds the item's JUnit test count and failed ids, as its adapter
// names them, to ev; a failed test that cannot be named gives no id, so the item
// re-runs whole.
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
