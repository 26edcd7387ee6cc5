package shard

// Merging makes the shards' log dirs of a job matrix one run (docs/runners.md); the engine's Merge writes it,
// decides the verdicts and learns once, as a run does.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// LogDir is one shard's log dir, as merge reads it.
type LogDir struct {
	Dir    string // as given
	Run    *record.Run
	Number int // 1 … K
	// Listed is every item its listing gave, before it kept its shard's; nil when it stopped before listing.
	Listed []record.ItemID
	// Census is its queue/items.tsv; nil when it has none.
	Census []record.ItemID
	// Plan is the plan it followed (queue/plan.json); nil without one.
	Plan *Plan
	// ID names this shard run for the weight table: merging the same log dir again gives the same ID.
	ID string
}

// MergeError is a set of log dirs that cannot be merged; the message names the log dir and the fix.
type MergeError struct {
	Msg string
	Err error
}

func (e *MergeError) Error() string { return e.Msg }
func (e *MergeError) Unwrap() error { return e.Err }

// wrap is err as a *MergeError: the merge refuses it.
func wrap(err error) error { return &MergeError{Msg: err.Error(), Err: err} }

func errorf(format string, a ...any) error { return &MergeError{Msg: fmt.Sprintf(format, a...)} }

// ReadLogDirs reads the shards' log dirs and checks they are one matrix: same K, arch and level, no shard twice,
// one plan and config unless allowMixed (then warnings). how spells the allowing option in the user's face.
func ReadLogDirs(dirs []string, allowMixed bool, how string) ([]*LogDir, []string, error) {
	if len(dirs) == 0 {
		return nil, nil, errorf("no shard log dir given: name the log dir of every shard of the matrix (sgpu-queue merge DIR...)")
	}
	var shards []*LogDir
	var warns []string
	for _, dir := range dirs {
		s, w, err := readShard(dir)
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		shards = append(shards, s)
	}
	mixed, err := check(shards, allowMixed, how)
	if err != nil {
		return nil, nil, err
	}
	warns = append(warns, mixed...)
	slices.SortStableFunc(shards, func(a, b *LogDir) int { return a.Number - b.Number })
	return shards, warns, nil
}

func readShard(dir string) (*LogDir, []string, error) {
	run, warns, err := logdir.Load(dir)
	if err != nil {
		return nil, nil, wrap(err)
	}
	for i, w := range warns {
		warns[i] = dir + ": " + w
	}
	m := run.Meta
	if m.Shard == nil {
		what := "a whole run"
		if m.Merge != nil {
			what = "a merge"
		}
		return nil, nil, errorf("%s is the log dir of %s, not of a shard: merge the log dirs of the jobs that ran sgpu-queue run --shard I/K",
			dir, what)
	}
	s := &LogDir{Dir: dir, Run: run, Number: m.Shard.Shard, ID: runID(run)}
	if m.Shard.Shard < 1 || m.Shard.Shard > m.Shard.Shards || m.Shard.Shards > MaxShards {
		return nil, nil, errorf("%s: run.json says shard %d/%d, which no run writes; give the log dir as the shard job left it", dir,
			m.Shard.Shard, m.Shard.Shards)
	}
	if !m.Finished {
		warns = append(warns, fmt.Sprintf("%s: shard %d/%d never finished its run (was it killed?): its rows until then are merged, its items "+
			"without a row count as never ran", dir, m.Shard.Shard, m.Shard.Shards))
	}
	l := logdir.Layout{Root: run.Dir}
	if s.Listed, err = readItems(l.ListedTSV()); err != nil {
		return nil, nil, err
	}
	if s.Census, err = readItems(l.ItemsTSV()); err != nil {
		return nil, nil, err
	}
	if s.Listed == nil && len(run.Queue) > 0 {
		// Its listing file is gone but it queued items: those at least it listed.
		warns = append(warns, fmt.Sprintf("%s: no queue/listed.tsv: the items it queued stand for its listing", dir))
		for _, q := range run.Queue {
			s.Listed = append(s.Listed, q.ItemID)
		}
	}
	if m.Shard.Plan != nil {
		f, err := safefs.Open(l.PlanJSON())
		switch {
		case errors.Is(err, fs.ErrNotExist) && s.Listed == nil && len(run.Queue) == 0:
			// Killed while listing: run.json's plan digest still ties it to the matrix.
			warns = append(warns, fmt.Sprintf("%s: no queue/plan.json: the shard stopped before it queued its items; its plan is the others'", dir))
			return s, warns, nil
		case err != nil:
			return nil, nil, errorf("%s: the plan the shard followed is not there (%v): give the log dir as the shard job left it", dir, err)
		}
		defer f.Close()
		if s.Plan, err = Read(f, l.PlanJSON()); err != nil {
			return nil, nil, wrap(err)
		}
	}
	return s, warns, nil
}

// runID is a shard run's ID: a hash of its shard, start and rows, which no other run shares.
func runID(r *record.Run) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d/%d\t%s\t%s\n", r.Meta.Shard.Shard, r.Meta.Shard.Shards,
		r.Meta.Started.UTC().Format(time.RFC3339Nano), planSum(r.Meta.Shard.Plan))
	for _, t := range r.Attempts {
		fmt.Fprintf(h, "%s\t%s\t%s\t%g\t%d\t%g\n", t.Label, t.Column(), t.GPU(), t.Secs, t.RC, t.StartOff)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// readItems reads an item list the run wrote; nil when the file is not there.
func readItems(path string) ([]record.ItemID, error) {
	data, err := safefs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(err)
	}
	items, err := ParseItems(bytes.NewReader(data), path)
	if err != nil {
		return nil, wrap(err)
	}
	if items == nil {
		items = []record.ItemID{} // read, and empty
	}
	return items, nil
}

// check refuses log dirs that are not one matrix's shards; differing plans or configs only warn under allowMixed.
func check(shards []*LogDir, allowMixed bool, how string) ([]string, error) {
	first := shards[0]
	fm := first.Run.Meta
	seen := map[int]string{}
	var warns []string
	for _, s := range shards {
		m := s.Run.Meta
		switch {
		case m.Shard.Shards != fm.Shard.Shards:
			return nil, errorf("%s is shard %d/%d but %s is shard %d/%d: give the log dirs of the shards of one matrix",
				s.Dir, m.Shard.Shard, m.Shard.Shards, first.Dir, fm.Shard.Shard, fm.Shard.Shards)
		case m.Arch != fm.Arch || m.Level != fm.Level:
			return nil, errorf("%s ran arch %s level %s but %s ran arch %s level %s: "+
				"shards of one matrix share one weight table, so one arch and level", s.Dir, m.Arch, m.Level, first.Dir, fm.Arch, fm.Level)
		}
		if diff := mixed(first, s); diff != "" && !allowMixed {
			return nil, errorf("%s: give the log dirs of the shards of one matrix (one plan job's plan, one config), "+
				"or give %s to merge them all the same (an item one shard listed and none ran then fails, never ran)", diff, how)
		} else if diff != "" {
			warns = append(warns, diff+": merged all the same ("+how+"); an item one shard listed and none ran fails, never ran")
		}
		if other, dup := seen[s.Number]; dup {
			return nil, errorf("%s and %s are both shard %d/%d: give each shard's log dir once", other, s.Dir, s.Number, m.Shard.Shards)
		}
		seen[s.Number] = s.Dir
		if abs(s.Dir) == "" {
			return nil, errorf("%s: not a usable path", s.Dir)
		}
	}
	return warns, nil
}

// mixed says how shard b ran another plan or config than shard a; "" when they agree.
func mixed(a, b *LogDir) string {
	am, bm := a.Run.Meta, b.Run.Meta
	if planSum(am.Shard.Plan) != planSum(bm.Shard.Plan) {
		return fmt.Sprintf("%s ran %s but %s ran %s", b.Dir, planName(bm.Shard.Plan), a.Dir, planName(am.Shard.Plan))
	}
	if d := suitesDiff(a, b); d != "" {
		return fmt.Sprintf("%s and %s ran different configs: %s", a.Dir, b.Dir, d)
	}
	if am.Shard.Config != "" && bm.Shard.Config != "" && am.Shard.Config != bm.Shard.Config {
		return fmt.Sprintf("%s and %s ran different configs: the same suites with other commands, arguments or options "+
			"(config sha256 %.12s… and %.12s…)",
			a.Dir, b.Dir, am.Shard.Config, bm.Shard.Config)
	}
	return ""
}

// suitesDiff is the first difference of the two shards' suites; "" when alike.
func suitesDiff(a, b *LogDir) string {
	as, bs := a.Run.Meta.Suites, b.Run.Meta.Suites
	for _, pair := range [][2]*LogDir{{a, b}, {b, a}} {
		mine, theirs := pair[0].Run.Meta.Suites, pair[1].Run.Meta.Suites
		for _, x := range mine {
			if !slices.ContainsFunc(theirs, func(y record.MetaSuite) bool { return y.Label == x.Label }) {
				return fmt.Sprintf("suite %s only in %s", textfmt.Printable(x.Label), pair[0].Dir)
			}
		}
	}
	for _, x := range as {
		i := slices.IndexFunc(bs, func(y record.MetaSuite) bool { return y.Label == x.Label })
		if y := bs[i]; ranAs(y) != ranAs(x) {
			return fmt.Sprintf("suite %s is %s %s in %s but %s %s in %s", textfmt.Printable(x.Label),
				textfmt.Printable(x.LogFile), x.Mode, a.Dir, textfmt.Printable(y.LogFile), y.Mode, b.Dir)
		}
	}
	return ""
}

// ranAs is a suite as the config ran it, not as a re-run's "not re-run this attempt" says (runners.md).
func ranAs(s record.MetaSuite) record.MetaSuite {
	if s.Skip == outcome.NotRerun {
		s.Skip = ""
	}
	return s
}

func planSum(p *record.PlanRef) string {
	if p == nil {
		return ""
	}
	return p.SHA256
}

func planName(p *record.PlanRef) string {
	if p == nil {
		return "no plan (every item by its hash)"
	}
	return fmt.Sprintf("plan %s (sha256 %.12s…)", p.File, p.SHA256)
}

// abs is dir absolute and free of symlinks where it can be; "" when it cannot be made absolute.
func abs(dir string) string {
	a, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	return a
}

// SameDir reports whether out is a shard's log dir, which a merge into it would wipe.
func SameDir(out string, shards []*LogDir) (*LogDir, bool) {
	o := abs(out)
	for _, s := range shards {
		if abs(s.Dir) == o {
			return s, true
		}
	}
	return nil, false
}
