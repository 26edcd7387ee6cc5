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
)

// ToolName is what queue/run.json says in "tool": a log dir holding one is a log dir
// of this tool, whose earlier run's files it may delete.
const ToolName = "sgpu-queue"

// NotOursError refuses a log dir that holds files but no run of this tool: they are
// someone's data (`--log-dir .` in a repository), and a run would write among them.
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

// Claim makes the log dir this run's, in phase 0 of a real run (a dry run writes
// nothing and claims nothing):
//
//  1. Nothing the run would write, truncate or delete there may be a link, a FIFO
//     or anything but a regular file (a real directory where one belongs), nor any
//     directory on the way from the trusted root: the first that is is refused
//     (*safefs.Error) before anything is read, written or deleted
//     (docs/bad-day.md#the-state-between-runs-links-and-fifos).
//  2. A log dir that holds anything but this tool's empty directories and lock file,
//     and no queue/run.json of this tool, is refused (*NotOursError) unless reuse;
//     nothing is created then.
//  3. The lock is taken (*BusyError when another run holds it).
//  4. The files of the earlier run that queue/run.json records are deleted, and only
//     those (Owned), in an order that a claim stopped midway leaves for the next to
//     finish (removeOwned); nothing else under the log dir is touched.
//  5. The directories are created and claim is written as queue/run.json at once, so
//     that even a run killed in phase 1 leaves a log dir the next run may clean;
//     claim.ForeignCwd is set to the cwd/ entries still there, which no later run
//     deletes.
//
// The caller releases the lock when the run ends.
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

// removeOwned deletes what the earlier run prev owned (Owned) in an order that a
// claim stopped at any point (killed, or a directory it cannot remove) leaves for
// the next claim to finish: the items' directories, then the files, queue/queue.tsv
// (which names the items) last. queue/run.json, which marks the log dir as this
// tool's and names the suites' files, is not deleted: the claim replaces it.
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
		if err := l.removeFile(f); err != nil {
			return err
		}
	}
	return nil
}

// Prepare creates the directories of a run and deletes nothing: tests and tools that
// write a log dir without running (Claim is what a run calls).
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

// previous returns the earlier run recorded in queue/run.json (nil when there is
// none), or a *NotOursError for a log dir with other content and no run of ours.
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

// content lists what the log dir holds besides the lock and empty directories of a
// run (a run killed while claiming can leave those): up to four names, "…" for more.
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

// Owned lists what the run recorded by m wrote under the log dir, that a new run
// deletes (docs/files.md): expand.log; queue/{run.json,items.tsv,queue.tsv,
// timings.tsv,attempts.tsv} (an older run's outcomes.tsv too) and a shard's or a merge's queue/{listed.tsv,plan.json,
// shards.tsv}; report/{schedule.md,timeline.svg}; per suite of m,
// suites/<logfile> and .rc and prerequisite_ck_jit_status/<label>.log; per item of
// its queue/queue.tsv, every file in items/ that ParseItemFile reads as one of the
// item's (log, rc, attempts) and its cwd/<label>.<safetag>/ with what the item left
// in it, unless that directory was there before the run (m.ForeignCwd); and the
// temporary files of atomic writes of those files, when a run was killed mid-write.
// dirs are removed whole; files one by one. A directory of the layout that is a
// symlink is not looked into; a link in place of an owned file or directory is
// listed, and Claim refuses it (it is never followed, nor removed).
func (l Layout) Owned(m *record.Meta) (files, dirs []string) {
	files = []string{l.ExpandLog(), l.Meta(), l.ItemsTSV(), l.QueueTSV(), l.AttemptsTSV(), l.TimingsTSV(), l.OutcomesTSV(),
		l.Report(), l.Timeline(), l.ListedTSV(), l.PlanJSON(), l.ShardsTSV()}
	for _, s := range m.Suites {
		if validName(s.LogFile) {
			files = append(files, l.SuiteLog(s.LogFile), l.SuiteRC(s.LogFile))
		}
		if validName(s.Label) {
			files = append(files, l.SetupLog(s.Label))
		}
	}
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

// validName reports whether a name from run.json is one plain file name (run.json
// could be edited; a "../x" must not reach outside).
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

// temps lists the temporary files of atomic writes of files (".<name>.tmp<digits>",
// atomicfile.Write) found beside them.
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

// list names what a directory of the layout holds; nothing for a symlink or a
// directory that is not there.
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

// realDir reports whether dir is a directory and not a symlink to one (a link could
// point into someone's data).
func (l Layout) realDir(dir string) bool {
	if dir == l.Root {
		return true
	}
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}
