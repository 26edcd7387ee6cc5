package logdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// ToolName is run.json's "tool": a log dir holding it is ours, and its earlier run's files may be deleted.
const ToolName = "sgpu-queue"

// NotOursError refuses a log dir of someone's data (`--log-dir .` in a repository) holding no run of ours.
type NotOursError struct {
	Dir   string
	Why   string       // "no queue/run.json", or why run.json is not this tool's
	Found []string     // some of what is there, for the message
	Face  optname.Face // names the options in the message (the engine sets it)
}

func (e *NotOursError) Error() string {
	return fmt.Sprintf("log dir %s holds files that no sgpu-queue run wrote (%s; it holds %s): give an empty or new %s, "+
		"or %s to write beside them (a run only ever deletes files of its own earlier runs)",
		e.Dir, e.Why, strings.Join(e.Found, ", "), e.Face.Name("log-dir"), e.Face.Enable("log-dir-reuse"))
}

// Claim makes the log dir this run's in phase 0: it refuses links and FIFOs on the way
// (docs/bad-day.md#the-state-between-runs-links-and-fifos) and a dir that is not ours unless reuse, takes the lock,
// deletes only the earlier run's files (Owned) and writes run.json at once, so a run killed in phase 1 leaves
// a log dir the next run may clean. The caller releases the lock.
func (l Layout) Claim(claim *record.Meta, reuse bool) (*Lock, error) {
	if err := l.checkFixed(); err != nil {
		return nil, err
	}
	prev, err := l.previous(reuse)
	if err != nil {
		return nil, err
	}
	if err := l.checkNamed(prev, claim); err != nil {
		return nil, err
	}
	lock, err := l.lock()
	if err != nil {
		return nil, err
	}
	err = l.claimLocked(claim, reuse)
	if err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

func (l Layout) claimLocked(claim *record.Meta, reuse bool) error {
	// Looked at again under the lock: a run may have ended in between.
	prev, err := l.previous(reuse)
	if err != nil {
		return err
	}
	if prev != nil {
		if err := l.removeOwned(prev); err != nil {
			return err
		}
	}
	if err := l.Prepare(); err != nil {
		return err
	}
	claim.ForeignCwd = l.list(l.CwdDir())
	return l.WriteMeta(claim)
}

// removeOwned deletes prev's files (Owned) in an order that a claim stopped midway leaves for the next to finish:
// queue/queue.tsv, which names the items, last; run.json is replaced by the claim.
func (l Layout) removeOwned(prev *record.Meta) error {
	files, dirs := l.Owned(prev)
	for _, d := range dirs {
		if err := l.removeDir(d); err != nil {
			return err
		}
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == l.Meta() })
	if i := slices.Index(files, l.QueueTSV()); i >= 0 {
		files = append(slices.Delete(files, i, i+1), l.QueueTSV())
	}
	for _, f := range files {
		if err := safefs.Remove(l.trusted(), f); err != nil {
			return err
		}
	}
	return nil
}

// Prepare creates a run's directories and deletes nothing, for tests and tools; a run calls Claim.
func (l Layout) Prepare() error {
	for _, d := range l.dirs() {
		if err := l.MkdirAll(d); err != nil {
			return err
		}
	}
	return nil
}

// dirs are the directories of a run, in the order they are made.
func (l Layout) dirs() []string {
	return []string{l.ItemsDir(), l.CwdDir(), l.SuitesDir(), l.ReportDir(), l.QueueDir(), l.SetupDir()}
}

// previous returns the earlier run of queue/run.json (nil for none), or a *NotOursError.
func (l Layout) previous(reuse bool) (*record.Meta, error) {
	data, err := readLogFile(l.Meta())
	why := "no queue/run.json"
	switch {
	case err == nil:
		var m record.Meta
		if jerr := json.Unmarshal(data, &m); jerr == nil && m.Tool == ToolName {
			return &m, nil
		}
		why = "its queue/run.json is not one of sgpu-queue's"
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	found, err := l.content()
	if err != nil || len(found) == 0 || reuse {
		return nil, err
	}
	return nil, &NotOursError{Dir: l.Root, Why: why, Found: found}
}

// content lists up to four names the log dir holds beyond a killed claim's lock and empty dirs, "…" for more.
func (l Layout) content() ([]string, error) {
	es, err := os.ReadDir(l.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{}
	for _, d := range l.dirs() {
		ours[filepath.Base(d)] = true
	}
	var found []string
	for _, e := range es {
		name := e.Name()
		if name == LockName {
			continue
		}
		if e.IsDir() && ours[name] {
			if sub, err := os.ReadDir(filepath.Join(l.Root, name)); err == nil && len(sub) == 0 {
				continue
			}
		}
		if e.IsDir() {
			name += "/"
		}
		if len(found) == 4 {
			found = append(found, "…")
			break
		}
		found = append(found, name)
	}
	return found, nil
}

// Owned lists what the run m wrote under the log dir, which a new run deletes (docs/files.md): dirs whole, files one
// by one, including atomic writes' temporary files. A link in place of an owned path is listed, and Claim refuses it.
func (l Layout) Owned(m *record.Meta) (files, dirs []string) {
	files = append(l.runFiles(), l.suiteFiles(m)...)
	files = append(files, l.temps(files)...)
	kept := files[:0]
	for _, f := range files {
		if l.realDir(filepath.Dir(f)) {
			kept = append(kept, f)
		}
	}
	files = kept
	bases := l.previousItems()
	for _, name := range l.list(l.ItemsDir()) {
		if f, ok := ParseItemFile(name); ok && bases[f.Base] {
			files = append(files, filepath.Join(l.ItemsDir(), name))
		}
	}
	for _, name := range l.list(l.CwdDir()) {
		if bases[name] && !slices.Contains(m.ForeignCwd, name) {
			dirs = append(dirs, filepath.Join(l.CwdDir(), name))
		}
	}
	sort.Strings(files)
	sort.Strings(dirs)
	return files, dirs
}

// suiteFiles are the files m's suites name: their verdict files and setup logs.
func (l Layout) suiteFiles(m *record.Meta) []string {
	var files []string
	for _, s := range m.Suites {
		if validName(s.LogFile) {
			files = append(files, l.SuiteLog(s.LogFile), l.SuiteRC(s.LogFile))
		}
		if validName(s.Label) {
			files = append(files, l.SetupLog(s.Label))
		}
	}
	return files
}

// validName reports whether a name from run.json is one plain file name: an edited "../x" must not reach outside.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// previousItems is the set of item bases of the earlier run's queue.tsv.
func (l Layout) previousItems() map[string]bool {
	bases := map[string]bool{}
	if !l.realDir(l.QueueDir()) {
		return bases
	}
	data, err := readLogFile(l.QueueTSV())
	if err != nil {
		return bases
	}
	rows, err := ParseQueue(bytes.NewReader(data))
	if err != nil {
		return bases
	}
	for _, r := range rows {
		bases[ItemBase(r.Label, r.Tag)] = true
	}
	return bases
}

// temps lists the temporary files of atomicfile.Write beside files.
func (l Layout) temps(files []string) []string {
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
	}
	var out []string
	for _, dir := range []string{l.Root, l.QueueDir(), l.ReportDir(), l.SuitesDir()} {
		for _, name := range l.list(dir) {
			if of, ok := atomicfile.TempOf(name); ok && want[filepath.Join(dir, of)] {
				out = append(out, filepath.Join(dir, name))
			}
		}
	}
	return out
}

// list names a layout dir's entries; nothing for a symlink or a missing dir.
func (l Layout) list(dir string) []string {
	if !l.realDir(dir) {
		return nil
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names
}

// realDir reports whether dir is a directory and not a link, which could point into someone's data.
func (l Layout) realDir(dir string) bool {
	if dir == l.Root {
		return true
	}
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}
