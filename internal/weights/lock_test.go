package weights

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Runs that save one table at once each keep what they learned: Rewrite reads the
// table again under the lock and applies the run's learning to what is there then.
// Without the lock and the re-read, each would save its own loaded table plus its
// key, and all but the last run's key would be lost.
func TestRewriteKeepsEveryRunsLearning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ci-weights", "w.txt")
	f := File{Path: path}
	const runs = 8
	loaded := make([]*Table, runs)
	for i := range loaded { // every run loads the table before any saves
		loaded[i], _, _ = f.Load(context.Background())
	}
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Rewrite(context.Background(), f, loaded[i], func(stored *Table) *Table {
				time.Sleep(5 * time.Millisecond) // hold the table, as learning does
				stored.Set(fmt.Sprintf("s/run%d", i), float64(i+1))
				return stored
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, _, err := f.Load(context.Background())
	if err != nil || got.Len() != runs {
		t.Fatalf("the table holds %q (%v), want every run's key", got.Keys(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("ci-weights holds %v, want the table alone (no lock file)", entries)
	}
}

// A store without a lock (the Actions cache) gets the learning applied to the
// table the run loaded: its semantics are those of a plain Save.
func TestRewriteWithoutLock(t *testing.T) {
	s := &memStore{t: table("s/a", 1.0)}
	loaded := table("s/a", 1.0, "s/b", 2.0)
	if _, err := Rewrite(context.Background(), s, loaded, func(stored *Table) *Table {
		if stored != loaded {
			t.Error("a store without a lock was read again")
		}
		stored.Set("s/c", 3)
		return stored
	}); err != nil {
		t.Fatal(err)
	}
	if dump(s.t) != "s/a=1 s/b=2 s/c=3" || s.loads != 0 {
		t.Errorf("saved %s after %d loads", dump(s.t), s.loads)
	}
}

type memStore struct {
	t     *Table
	loads int
	// saveCtxErr is the context's error Save was given.
	saveCtxErr error
}

func (m *memStore) Load(context.Context) (*Table, []string, error) {
	m.loads++
	return m.t.Clone(), nil, nil
}
func (m *memStore) Save(ctx context.Context, t *Table) error {
	m.t, m.saveCtxErr = t, ctx.Err()
	return nil
}
func (m *memStore) String() string { return "mem" }

// A cancelled context ends only the wait for another run's lock (a signal while a
// run waits, docs/weights.md "Runs at once"): with the lock held elsewhere it is a
// *safefs.LockError wrapping context.Canceled, nothing applied; with the lock free,
// or a store without one (the Actions cache, whose save a cancel would abort), the
// table is read and written as ever.
func TestRewriteCancelEndsOnlyTheWait(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "w.txt")
	f := File{Path: path}
	unlock, err := f.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	applied := false
	_, err = Rewrite(cancelled, f, New(), func(stored *Table) *Table { applied = true; return stored })
	var le *safefs.LockError
	if !errors.As(err, &le) || !errors.Is(err, context.Canceled) || applied {
		t.Errorf("cancelled while another holds the lock: %v (applied %v), want a *safefs.LockError of the cancel", err, applied)
	}
	unlock()
	if _, err := Rewrite(cancelled, f, New(), func(stored *Table) *Table { stored.Set("s/a", 1); return stored }); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := f.Load(context.Background()); dump(got) != "s/a=1" {
		t.Errorf("the lock free, the table holds %s, want s/a=1", dump(got))
	}
	s := &memStore{t: New()}
	if _, err := Rewrite(cancelled, s, New(), func(stored *Table) *Table { return stored }); err != nil || s.saveCtxErr != nil {
		t.Errorf("a store without a lock saved with a context in error %v (%v)", s.saveCtxErr, err)
	}
}

// The lock is taken where the table really lives: a symlinked table and its target
// share one lock, and the link's directory gets nothing. A run held past the wait
// is a *safefs.LockError (Busy), and nothing is applied or written.
func TestLockWhereTheTableLives(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	repo := filepath.Join(t.TempDir(), "ci-weights")
	os.MkdirAll(shared, 0o755)
	os.MkdirAll(repo, 0o755)
	target := filepath.Join(shared, "w.txt")
	os.WriteFile(target, []byte("s/a 1.0\n"), 0o644)
	link := filepath.Join(repo, "w.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	unlock, err := File{Path: link}.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	other := File{Path: target, LockWait: 100 * time.Millisecond}
	applied := false
	_, err = Rewrite(context.Background(), other, New(), func(stored *Table) *Table { applied = true; return stored })
	var le *safefs.LockError
	if !errors.As(err, &le) || !le.Busy || le.Dir != shared || applied {
		t.Errorf("Rewrite while the link's holder saves: %v (applied %v), want a busy *safefs.LockError on %s", err, applied, shared)
	}
	unlock()
	if _, err := Rewrite(context.Background(), other, New(), func(stored *Table) *Table {
		stored.Set("s/b", 2)
		return stored
	}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if data, _ := os.ReadFile(target); string(data) != "s/b 2.0\ns/a 1.0\n" {
		t.Errorf("target = %q", data)
	}
	if entries, _ := os.ReadDir(repo); len(entries) != 1 {
		t.Errorf("the link's directory holds %v, want the link alone", entries)
	}
}

// A FIFO in the table's place is an unreadable table (docs/files.md): loading it
// never blocks, and neither Save nor Rewrite writes over it.
func TestFIFOTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.txt")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f := File{Path: path}
		var ue *UnreadableError
		if tab, _, err := f.Load(context.Background()); !errors.As(err, &ue) || tab.Len() != 0 {
			t.Errorf("Load: %v, want an *UnreadableError", err)
		}
		if err := f.Save(context.Background(), table("s/a", 1.0)); !errors.As(err, &ue) {
			t.Errorf("Save: %v, want an *UnreadableError", err)
		}
		applied := false
		if _, err := Rewrite(context.Background(), f, New(), func(s *Table) *Table { applied = true; return s }); !errors.As(err, &ue) || applied {
			t.Errorf("Rewrite: %v (applied %v), want an *UnreadableError", err, applied)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("blocked on the FIFO")
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}
