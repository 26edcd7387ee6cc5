package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// The listing every shard of the tests gives: two suites, one opaque.
var listing = []record.ItemID{
	{Label: "torch", Tag: "a"}, {Label: "torch", Tag: "b"}, {Label: "torch", Tag: "c"}, {Label: "torch", Tag: "d"},
	{Label: "torch", Tag: "new"}, {Label: "core"},
}

// census is the listing plus an item the runners' capability probe skips.
var census = append(append([]record.ItemID(nil), listing...), record.ItemID{Label: "torch", Tag: "gated"})

var metaSuites = []record.MetaSuite{{Label: "torch", LogFile: "torch.log", Mode: "list"}, {Label: "core", LogFile: "core.log", Mode: "opaque"}}

// testPlan plans the census but torch/new over 3 shards of 2 GPUs, and returns the
// plan file's bytes.
func testPlan(t *testing.T) (*Plan, []byte) {
	t.Helper()
	var items []schedule.Item
	for i, k := range census {
		if k.Tag == "new" {
			continue
		}
		items = append(items, schedule.Item{ItemID: k, Weight: float64(10 - i), Known: true, Seq: i})
	}
	a, err := Assign(items, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := New(items, a, Identity{Store: "t", Arch: "gfx942", Level: "1", SHA256: "abc"}, "weights")
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(b.Bytes()), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	return back, b.Bytes()
}

// writeShard writes the log dir of shard s as run --shard s/3 leaves it: the items
// of its shard ran (each one second, GPU 0 then 1), failing those in fail.
func writeShard(t *testing.T, dir string, s int, p *Plan, raw []byte, fail map[string]int, edit func(*record.Meta)) {
	t.Helper()
	l := logdir.Layout{Root: dir}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	m := &record.Meta{Tool: logdir.ToolName, Format: logdir.FormatAttempts, Suites: metaSuites, GPUs: []string{"0", "1"},
		Arch: "gfx942", Level: "1", DefaultWeight: 999999, Started: time.Unix(1000, 0), Finished: true,
		Shard: &record.ShardRun{Shard: s, Shards: 3, Plan: &record.PlanRef{File: "plan.json", SHA256: hex.EncodeToString(sum[:])}}}
	var queue []record.QueueRow
	var listed, cen []record.ItemID
	tw, err := l.OpenAttempts()
	if err != nil {
		t.Fatal(err)
	}
	off := 0.0
	for i, k := range listing {
		listed = append(listed, k)
		if p.ShardOf(k.Key()) != s {
			continue
		}
		queue = append(queue, record.QueueRow{ItemID: k, Weight: 1, Cmd: "ci/" + k.Label + ".sh"})
		o, rc := outcome.OK, fail[k.Key()]
		if rc != 0 {
			o = outcome.Failed
		}
		gpu := []string{"0", "1"}[i%2]
		a := record.Attempt{ItemID: k, GPUs: []string{gpu}, Secs: 1, RC: rc, StartOff: off, EndOff: off + 1, Estimate: 1, Known: true, Outcome: o}
		if err := tw.Append(a); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(l.ItemLog(k.Label, k.Tag), []byte("log of "+k.Key()+"\n"), 0o644)
		off += 0.5
		m.Wall = off + 1
	}
	tw.Close()
	cen = append(cen, census...)
	for path, data := range map[string][]byte{l.QueueTSV(): logdir.FormatQueue(queue), l.ListedTSV(): logdir.FormatItems(listed),
		l.ItemsTSV(): logdir.FormatItems(cen), l.PlanJSON(): raw} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(m)
	}
	if err := l.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
}

// matrix writes the shards given and returns their log dirs.
func matrix(t *testing.T, fail map[string]int, shards ...int) ([]string, *Plan) {
	t.Helper()
	p, raw := testPlan(t)
	root := t.TempDir()
	var dirs []string
	for _, s := range shards {
		d := filepath.Join(root, "s"+string(rune('0'+s)), "logs")
		writeShard(t, d, s, p, raw, fail, nil)
		dirs = append(dirs, d)
	}
	return dirs, p
}

// shardWriter returns a function that writes shard s of one test plan, as
// edited, in a fresh directory of the name given, and returns it.
func shardWriter(t *testing.T) func(name string, s int, edit func(*record.Meta)) string {
	p, raw := testPlan(t)
	root := t.TempDir()
	return func(name string, s int, edit func(*record.Meta)) string {
		d := filepath.Join(root, name)
		writeShard(t, d, s, p, raw, nil, edit)
		return d
	}
}

// mustRead reads shards of one matrix, failing the test on an error.
func mustRead(t *testing.T, dirs []string) []*LogDir {
	t.Helper()
	shards, _, err := ReadLogDirs(dirs, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	return shards
}

func TestBuildAllShards(t *testing.T) {
	dirs, p := matrix(t, map[string]int{"torch/b": 3}, 3, 1, 2) // any order
	shards, warns, err := ReadLogDirs(dirs, false, "--allow-mixed")
	if err != nil || len(warns) > 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if shards[0].Number != 1 || shards[2].Number != 3 {
		t.Errorf("shards not in number order: %d %d %d", shards[0].Number, shards[1].Number, shards[2].Number)
	}
	m := Merge(shards, weights.New(), 999999)
	r := m.Run
	if len(r.Queue) != len(listing) || len(r.Attempts) != len(listing) || len(m.NeverRan) != 0 {
		t.Errorf("%d queued, %d rows, never ran %v; want every listed item once", len(r.Queue), len(r.Attempts), m.NeverRan)
	}
	for _, tm := range r.Attempts {
		s, _, ok := record.SplitShardGPU(tm.GPU())
		key := tm.Key()
		if !ok || s != p.ShardOf(key) || tm.Shard != s || r.ShardOf[tm.ItemID] != s || tm.Outcome == "" {
			t.Errorf("row %+v: gpu %q, want s%d:<gpu>, its shard recorded, its outcome set", tm, tm.GPU(), p.ShardOf(key))
		}
	}
	if want := []string{"s1:0", "s1:1", "s2:0", "s2:1", "s3:0", "s3:1"}; !cmp.Equal(r.Meta.GPUs, want) {
		t.Errorf("GPUs %v, want %v", r.Meta.GPUs, want)
	}
	mm := r.Meta.Merge
	if mm.Shards != 3 || mm.NotListed != 1 || len(mm.Parts) != 3 {
		t.Errorf("merge %+v: want 3 parts, torch/gated listed by no shard", mm)
	}
	for _, part := range mm.Parts {
		if !part.Reported || part.Stop != nil || part.Wall <= 0 || part.Predicted != p.Shards[part.Shard-1].Wall {
			t.Errorf("part %+v", part)
		}
	}
	// Every shard has the census of both suites: both prune, by the union.
	if len(m.Census["torch"]) != 6 || !m.Census["torch"]["torch/gated"] || !m.Census["core"]["core"] {
		t.Errorf("census %v", m.Census)
	}
	if len(m.CensusRows) != len(census) {
		t.Errorf("census rows %v", m.CensusRows)
	}
	if len(m.JUnit) != 0 {
		t.Errorf("JUnit %v: no shard recorded any", m.JUnit)
	}
	if a := MergeAdvice(r.Meta.Merge, verdict.Decide(r), 2); !strings.HasPrefix(a, "a 4th runner would save") {
		t.Errorf("advice %q", a)
	}
}

// A shard that never reported: the items the others listed that are its own
// never ran; the census-only item is none of them; no advice is made up.
func TestBuildMissingShard(t *testing.T) {
	dirs, p := matrix(t, nil, 1, 3)
	shards, _, err := ReadLogDirs(dirs, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(shards, weights.New(), 999999)
	var want []string
	for _, k := range listing {
		if p.ShardOf(k.Key()) == 2 {
			want = append(want, k.Key())
		}
	}
	if len(want) == 0 {
		t.Fatal("the plan gives shard 2 nothing")
	}
	if diff := cmp.Diff(want, m.NeverRan); diff != "" {
		t.Errorf("never ran (-want +got):\n%s", diff)
	}
	part := m.Run.Meta.Merge.Parts[1]
	if part.Reported || part.Stop == nil || part.Stop.Reason != outcome.StopNotReported {
		t.Errorf("shard 2's part %+v", part)
	}
	for _, k := range m.NeverRan {
		id := record.ParseItemID(k)
		label, tag := id.Label, id.Tag
		if m.Run.ShardOf[record.ItemID{Label: label, Tag: tag}] != 2 {
			t.Errorf("%s: no shard recorded", k)
		}
	}
	if a := MergeAdvice(m.Run.Meta.Merge, verdict.Decide(m.Run), 2); a != "" {
		t.Errorf("advice %q with a shard missing", a)
	}
}

// A shard cancelled while listing (no listing, no queue) and no other shard: its
// items and the missing shards' are the plan's keys, all there is to go by; the
// cancelled shard's never ran by its own record, the others' by theirs.
func TestBuildNoListing(t *testing.T) {
	p, raw := testPlan(t)
	dir := filepath.Join(t.TempDir(), "s1")
	writeShard(t, dir, 1, p, raw, nil, func(m *record.Meta) {
		m.Cancelled, m.Stop, m.Wall = true, &record.Stop{Reason: outcome.StopCancelled, Message: "cancelled while listing", Phase: 1}, 0
	})
	l := logdir.Layout{Root: dir}
	for _, f := range []string{l.ListedTSV(), l.QueueTSV(), l.TimingsTSV(), l.AttemptsTSV()} {
		os.WriteFile(f, nil, 0o644)
	}
	os.Remove(l.ListedTSV())
	shards, _, err := ReadLogDirs([]string{dir}, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(shards, weights.New(), 999999)
	n := len(p.Shards[0].Keys) + len(p.Shards[1].Keys) + len(p.Shards[2].Keys)
	if len(m.NeverRan) != n || len(m.Warnings) != 1 || !m.Unlisted[1] || len(m.Run.Queue) != n {
		t.Errorf("never ran %v (want the plan's %d keys), warnings %v, unlisted %v", m.NeverRan, n, m.Warnings, m.Unlisted)
	}
	for _, su := range verdict.Decide(m.Run) {
		for _, it := range su.Items {
			want := "cancelled before it started"
			if it.Shard != 1 {
				want = fmt.Sprintf("never ran: shard %d/3 never reported", it.Shard)
			}
			if it.Note != want || !it.Failed {
				t.Errorf("%s/%s (shard %d): %q, want %q", it.Label, it.Tag, it.Shard, it.Note, want)
			}
		}
	}
}

// A suite whose census one shard lacks prunes nothing.
func TestBuildCensusNeedsEveryShard(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2)
	items := filepath.Join(dirs[1], "queue", "items.tsv")
	os.WriteFile(items, []byte("core\t\n"), 0o644)
	shards, _, err := ReadLogDirs(dirs, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(shards, weights.New(), 999999)
	if _, ok := m.Census["torch"]; ok || m.Census["core"] == nil {
		t.Errorf("census %v: want core's alone", m.Census)
	}
}

func TestReadRefuses(t *testing.T) {
	dir := shardWriter(t)
	one, two := dir("one", 1, nil), dir("two", 2, nil)
	root := filepath.Dir(one)
	whole := dir("whole", 1, func(m *record.Meta) { m.Shard = nil })
	four := dir("four", 2, func(m *record.Meta) { m.Shard.Shards = 4 })
	other := dir("other", 2, func(m *record.Meta) { m.Shard.Plan.SHA256 = "ffff" })
	level := dir("level", 2, func(m *record.Meta) { m.Level = "3" })
	bogus := dir("bogus", 2, func(m *record.Meta) { m.Shard.Shard = 5 })
	noplan := dir("noplan", 2, nil)
	os.Remove(filepath.Join(noplan, "queue", "plan.json"))
	tests := []struct {
		dirs []string
		want string
	}{
		{nil, "no shard log dir given"},
		{[]string{one, filepath.Join(root, "none")}, "none does not exist: give the log dir of a run"},
		{[]string{one, whole}, "is the log dir of a whole run, not of a shard"},
		{[]string{one, four}, "is shard 2/4 but " + one + " is shard 1/3"},
		{[]string{one, other}, "ran plan plan.json (sha256 ffff…) but"},
		{[]string{one, level}, "ran arch gfx942 level 3 but"},
		{[]string{one, two, one}, "are both shard 1/3"},
		{[]string{bogus}, "run.json says shard 5/3"},
		{[]string{noplan}, "the plan the shard followed is not there"},
	}
	for _, tc := range tests {
		_, _, err := ReadLogDirs(tc.dirs, false, "--allow-mixed")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadLogDirs(%v) = %v; want one line with %q", tc.dirs, err, tc.want)
		}
	}
	shards, _, err := ReadLogDirs([]string{one, two}, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	if s, same := SameDir(filepath.Join(two, ".", ""), shards); !same || s.Number != 2 {
		t.Errorf("SameDir did not see shard 2's own log dir")
	}
	if _, same := SameDir(filepath.Join(root, "out"), shards); same {
		t.Errorf("SameDir: a new dir is not a shard's")
	}
}

// CopyLogs links each shard's item files into the merged log dir and never
// replaces a file that is there.
func TestCopyLogs(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2, 3)
	shards, _, err := ReadLogDirs(dirs, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	out := logdir.Layout{Root: t.TempDir()}
	if err := out.Prepare(); err != nil {
		t.Fatal(err)
	}
	mine := out.ItemLog("torch", "a")
	os.WriteFile(mine, []byte("not the shard's"), 0o644)
	n, err := CopyLogs(shards, out)
	if err != nil || n != len(listing)-1 {
		t.Errorf("CopyLogs = %d, %v; want %d (all but the one there)", n, err, len(listing)-1)
	}
	if data, _ := os.ReadFile(mine); string(data) != "not the shard's" {
		t.Errorf("a file that was there was replaced: %q", data)
	}
	if data, _ := os.ReadFile(out.ItemLog("core", "")); string(data) != "log of core\n" {
		t.Errorf("core's log: %q", data)
	}
}

// The JUnit files a shard's run.json names are read only when they are a suite's
// merged file beside its log dir: a run.json cannot point the merge elsewhere.
func TestBuildJUnitPaths(t *testing.T) {
	p, raw := testPlan(t)
	dir := filepath.Join(t.TempDir(), "artifact", "logs")
	writeShard(t, dir, 1, p, raw, nil, func(m *record.Meta) {
		m.Shard.JUnit = []string{"../junit/torch.xml", "../junit/core.xml", "../../elsewhere/torch.xml", "/etc/torch.xml", "../junit/notasuite.xml", "../junit/torch.txt"}
	})
	shards, _, err := ReadLogDirs([]string{dir}, false, "--allow-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(shards, weights.New(), 999999)
	root := filepath.Dir(abs(dir))
	want := map[string][]JUnitFile{
		"torch": {{Shard: 1, Path: filepath.Join(root, "junit", "torch.xml")}},
		"core":  {{Shard: 1, Path: filepath.Join(root, "junit", "core.xml")}},
	}
	if diff := cmp.Diff(want, m.JUnit); diff != "" || len(m.Warnings) != 4 {
		t.Errorf("JUnit (-want +got):\n%s\nwarnings %q", diff, m.Warnings)
	}
}

// A shard whose listing failed (run.json: stop listing-failed naming the suite, an
// empty queue, no listed.tsv), and one killed while listing (a claim-only
// run.json, no queue, no plan copy): both merge with the others, no refusal. The
// failed suite fails with the shard's reason, the stopped shard's items never ran
// and say why, and the merge exits 1. The killed one is shard 1: the plan is read
// from another shard's copy.
func TestBuildShardListingFailed(t *testing.T) {
	const why = `ci/torch.conf:1: suite "torch": its queue listing (TE_CI_LIST_ITEMS=1) exited with 4; it must list its items and exit 0; last output: ImportError: no module named torch`
	for _, killed := range []bool{false, true} {
		t.Run(fmt.Sprintf("killed=%v", killed), func(t *testing.T) {
			bad := map[bool]int{false: 2, true: 1}[killed]
			p, raw := testPlan(t)
			root := t.TempDir()
			var dirs []string
			for s := 1; s <= 3; s++ {
				d := filepath.Join(root, fmt.Sprint(s))
				writeShard(t, d, s, p, raw, nil, func(m *record.Meta) {
					if s == bad && !killed {
						m.Stop, m.Wall = &record.Stop{Reason: outcome.StopListingFailed, Message: why, Phase: 1, Suite: "torch"}, 0
					}
					if s == bad && killed {
						m.Finished, m.Format, m.Started, m.Wall = false, 0, time.Time{}, 0
					}
				})
				dirs = append(dirs, d)
			}
			l := logdir.Layout{Root: dirs[bad-1]}
			for _, f := range []string{l.ListedTSV(), l.TimingsTSV(), l.AttemptsTSV()} {
				os.Remove(f)
			}
			os.WriteFile(l.QueueTSV(), nil, 0o644)
			if killed {
				os.Remove(l.QueueTSV())
				os.Remove(l.PlanJSON())
			}
			shards, warns, err := ReadLogDirs(dirs, false, "--allow-mixed")
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if wantWarns := map[bool]int{false: 0, true: 3}[killed]; len(warns) != wantWarns {
				t.Errorf("warnings %q, want %d", warns, wantWarns)
			}
			m := Merge(shards, weights.New(), 999999)
			var lost []string // the listed items the plan (or the hash) gives shard 2
			for _, k := range listing {
				if p.ShardOf(k.Key()) == bad {
					lost = append(lost, k.Key())
				}
			}
			if !m.Unlisted[bad] || m.Plan == nil || !cmp.Equal(m.NeverRan, lost) {
				t.Errorf("unlisted %v, plan %v, never ran %v; want shard %d's %v", m.Unlisted, m.Plan != nil, m.NeverRan, bad, lost)
			}
			s := verdict.Decide(m.Run)
			torch := s[0]
			wantBroken := ""
			if !killed {
				wantBroken = fmt.Sprintf("its listing failed on shard %d/3: %s", bad, why)
			}
			if torch.Broken != wantBroken || torch.Passed() || torch.RC != 1 {
				t.Errorf("torch: broken %q rc %d; want %q rc 1", torch.Broken, torch.RC, wantBroken)
			}
			note := map[bool]string{false: `never ran: shard 2/3 stopped when suite "torch"'s listing failed`, true: "never ran: shard 1/3 wrote no row for it"}[killed]
			for _, it := range verdict.FailedItems(s) {
				if it.Shard != bad || it.Note != note || it.Started {
					t.Errorf("%s/%s: shard %d note %q started %v; want shard %d, %q, never started", it.Label, it.Tag, it.Shard, it.Note, it.Started, bad, note)
				}
			}
			if code := verdict.ExitCode(s); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
		})
	}
}

// An item two shards both queued (shards given different plans) is queued once, as
// the first shard's, with a warning that names that
func TestBuildItemQueuedTwice(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2, 3)
	shards := mustRead(t, dirs)
	q := shards[0].Run.Queue[0]
	shards[2].Run.Queue = append(shards[2].Run.Queue, q)
	m := Merge(shards, weights.New(), 999999)
	ref := q.ItemID
	n := 0
	for _, r := range m.Run.Queue {
		if r.Label == q.Label && r.Tag == q.Tag {
			n++
		}
	}
	if n != 1 || m.Run.ShardOf[ref] != 1 || len(m.Run.Queue) != len(listing) {
		t.Errorf("%s queued %d times, on shard %d; %d queued in all, want once on shard 1 and %d", ref, n, m.Run.ShardOf[ref], len(m.Run.Queue), len(listing))
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "was queued by shard 1 too") {
		t.Errorf("warnings %q", m.Warnings)
	}
}

// A shard's item log that is a symlink (an artifact can hold one) is not followed:
// the merged log dir gets no copy of what it points at.
func TestCopyLogsSkipsSymlinks(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2, 3)
	shards := mustRead(t, dirs)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("not the shard's"), 0o600)
	q := shards[0].Run.Queue[0]
	link := logdir.Layout{Root: shards[0].Run.Dir}.ItemLog(q.Label, q.Tag)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	out := logdir.Layout{Root: t.TempDir()}
	if err := out.Prepare(); err != nil {
		t.Fatal(err)
	}
	n, err := CopyLogs(shards, out)
	if err != nil || n != len(listing)-1 {
		t.Errorf("CopyLogs = %d, %v; want %d (all but the link)", n, err, len(listing)-1)
	}
	if _, err := os.Lstat(out.ItemLog(q.Label, q.Tag)); err == nil {
		t.Errorf("%s was put in the merged log dir", out.ItemLog(q.Label, q.Tag))
	}
}

// An item shard 1 and 3 listed whose own shard 2 reported without listing it (its
// host lists differently) ran nowhere: the merge queues it, records it unclaimed
// with the shards that listed it, and its verdict fails it, never ran, rc 1.
func TestBuildUnclaimed(t *testing.T) {
	dirs, p := matrix(t, nil, 1, 2, 3)
	shards := mustRead(t, dirs)
	var lost record.ItemID
	for _, k := range listing {
		if p.ShardOf(k.Key()) == 2 {
			lost = k
			break
		}
	}
	if lost.Label == "" {
		t.Fatalf("the plan gives shard 2 no listed item: %+v", p.Shards)
	}
	s2 := shards[1]
	s2.Listed = slices.DeleteFunc(slices.Clone(s2.Listed), func(k record.ItemID) bool { return k == lost })
	s2.Run.Queue = slices.DeleteFunc(s2.Run.Queue, func(q record.QueueRow) bool { return q.Label == lost.Label && q.Tag == lost.Tag })
	s2.Run.Attempts = slices.DeleteFunc(s2.Run.Attempts, func(r record.Attempt) bool { return r.ItemID == lost })
	m := Merge(shards, weights.New(), 999999)
	want := []record.Unclaimed{{ItemID: lost, Shard: 2, ListedBy: []int{1, 3}}}
	if diff := cmp.Diff(want, m.Run.Meta.Merge.Unclaimed); diff != "" {
		t.Errorf("unclaimed (-want +got):\n%s", diff)
	}
	if len(m.NeverRan) != 0 || len(m.Run.Queue) != len(listing) {
		t.Errorf("never ran %v, %d queued; want none never ran (every shard reported) and all %d queued", m.NeverRan, len(m.Run.Queue), len(listing))
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "listed by shard(s) 1, 3 but not by its own shard 2/3") {
		t.Errorf("warnings %q", m.Warnings)
	}
	failed := verdict.FailedItems(verdict.Decide(m.Run))
	note := "never ran: listed by shards 1/3 and 3/3, not by its own shard 2/3"
	if len(failed) != 1 || failed[0].Tag != lost.Tag || failed[0].Note != note || !failed[0].Unclaimed || failed[0].RC != 1 {
		t.Errorf("failed items %+v; want %s alone, %q, rc 1", failed, lost.Key(), note)
	}
}

// Shards of one K, arch and level that ran different plans or configs: refused in
// one line naming both log dirs and the difference; with allowMixed, merged with a
// warning saying the same.
func TestReadMixed(t *testing.T) {
	dir := shardWriter(t)
	one := dir("one", 1, func(m *record.Meta) { m.Shard.Config = "aaaa" })
	root := filepath.Dir(one)
	tests := []struct {
		other string
		want  string
	}{
		{dir("plan", 2, func(m *record.Meta) { m.Shard.Plan.SHA256 = "ffff" }), "plan ran plan plan.json (sha256 ffff…) but " + one + " ran plan plan.json"},
		{dir("noplan", 2, func(m *record.Meta) { m.Shard.Plan = nil }), "ran no plan (every item by its hash) but"},
		{dir("fewer", 2, func(m *record.Meta) { m.Suites = m.Suites[:1] }), one + " and " + filepath.Join(root, "fewer") + " ran different configs: suite core only in " + one},
		{dir("more", 2, func(m *record.Meta) {
			m.Suites = append(slices.Clone(m.Suites), record.MetaSuite{Label: "x y", LogFile: "x.log", Mode: "list"})
		}),
			`ran different configs: suite "x y" only in ` + filepath.Join(root, "more")},
		{dir("mode", 2, func(m *record.Meta) {
			m.Suites = []record.MetaSuite{m.Suites[0], {Label: "core", LogFile: "core.log", Mode: "list"}}
		}),
			"suite core is core.log opaque in " + one + " but core.log list in"},
		{dir("cmds", 2, func(m *record.Meta) { m.Shard.Config = "bbbb" }), "the same suites with other commands, arguments or options (config sha256 aaaa… and bbbb…)"},
	}
	for _, tc := range tests {
		_, _, err := ReadLogDirs([]string{one, tc.other}, false, "--allow-mixed")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "or give --allow-mixed") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadLogDirs(%s) = %v; want one line with %q and the flag", tc.other, err, tc.want)
		}
		_, warns, err := ReadLogDirs([]string{one, tc.other}, true, "--allow-mixed")
		if err != nil || len(warns) != 1 || !strings.Contains(warns[0], tc.want) || !strings.Contains(warns[0], "merged all the same (--allow-mixed)") {
			t.Errorf("ReadLogDirs(%s, allowMixed) = %q, %v; want one warning with %q", tc.other, warns, err, tc.want)
		}
	}
	// A log dir written before the config digest was recorded is not "another config".
	if _, _, err := ReadLogDirs([]string{one, dir("old", 2, nil)}, false, "--allow-mixed"); err != nil {
		t.Errorf("a shard without a config digest: %v", err)
	}
}

// A shard run's ID is the same each time its log dir is read, and differs between
// shards, and from the same shard run again (another start, other rows).
func TestShardIDs(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2, 3)
	a, b := mustRead(t, dirs), mustRead(t, dirs)
	seen := map[string]bool{}
	for i := range a {
		if a[i].ID != b[i].ID || len(a[i].ID) != 16 || seen[a[i].ID] {
			t.Errorf("shard %d: IDs %q and %q; want one 16-digit ID, not another shard's", a[i].Number, a[i].ID, b[i].ID)
		}
		seen[a[i].ID] = true
	}
	again := a[0].Run
	again.Meta.Started = again.Meta.Started.Add(time.Second)
	if runID(again) == b[0].ID {
		t.Error("a later run of shard 1 has the same ID")
	}
}

// The merged log dir's items/ that is a link (to a copy of a shard's items/
// outside, say) gets nothing: CopyLogs refuses it, and no file is linked or copied
// through it.
func TestCopyLogsRefusesLinkedItems(t *testing.T) {
	dirs, _ := matrix(t, nil, 1, 2, 3)
	shards := mustRead(t, dirs)
	repo := t.TempDir()
	out := logdir.New(filepath.Join(repo, "logs"), repo)
	if err := out.Prepare(); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	os.Remove(out.ItemsDir())
	if err := os.Symlink(elsewhere, out.ItemsDir()); err != nil {
		t.Fatal(err)
	}
	n, err := CopyLogs(shards, out)
	var se *safefs.Error
	if n != 0 || !errors.As(err, &se) || se.Path != out.ItemsDir() {
		t.Errorf("CopyLogs = %d, %v; want nothing, the linked items/ refused", n, err)
	}
	if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
		t.Errorf("%d files put through the link", len(es))
	}
}

// A FIFO in a shard's log dir where merge reads (run.json, the TSV files,
// plan.json) is an error naming it, never a wait for a writer.
func TestReadRefusesFIFOs(t *testing.T) {
	for _, rel := range []string{"queue/run.json", "queue/queue.tsv", "queue/attempts.tsv", "queue/listed.tsv", "queue/items.tsv",
		"queue/plan.json"} {
		t.Run(rel, func(t *testing.T) {
			dirs, _ := matrix(t, nil, 1, 2, 3)
			p := filepath.Join(dirs[0], filepath.FromSlash(rel))
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, _, err := ReadLogDirs(dirs, false, "--allow-mixed"); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), rel) || !strings.Contains(err.Error(), "named pipe (FIFO)") {
					t.Errorf("Read = %v, want an error naming the FIFO %s", err, rel)
				}
			case <-time.After(30 * time.Second): // generous: nothing here is timed
				t.Fatal("Read blocked on a FIFO")
			}
		})
	}
}

// TestBuildRerunShard: shard 2 of 3 was re-run narrowed to its one failed item
// (run.json's rerun, its other items carried with their earlier outcomes; a suite
// with nothing to re-run "not re-run this attempt"). ReadLogDirs takes it as the same
// config, and Merge sees every item of the shard once: the re-run one by its row,
// the others by their carried outcome; none is never ran or unclaimed.
func TestBuildRerunShard(t *testing.T) {
	p, raw := testPlan(t)
	root := t.TempDir()
	var dirs []string
	var mine []record.ItemID
	for _, k := range listing {
		if p.ShardOf(k.Key()) == 2 {
			mine = append(mine, k)
		}
	}
	if len(mine) < 2 {
		t.Fatalf("the plan gives shard 2 fewer than 2 listed items: %+v", p.Shards)
	}
	again := mine[0]
	for s := 1; s <= 3; s++ {
		d := filepath.Join(root, fmt.Sprint(s), "logs")
		writeShard(t, d, s, p, raw, nil, func(m *record.Meta) {
			if s != 2 {
				return
			}
			m.Rerun = &record.Rerun{Failed: 1, Queued: 1, Ran: 1}
			for _, k := range mine[1:] {
				m.Rerun.Carried = append(m.Rerun.Carried, record.Carried{ItemID: k,
					Result: record.Result{Outcome: outcome.OK, Seconds: 2, Width: 1, Tries: 1}})
			}
			m.Suites = slices.Clone(m.Suites)
			for i := range m.Suites {
				if m.Suites[i].Label != again.Label {
					m.Suites[i].Skip = outcome.NotRerun
				}
			}
		})
		dirs = append(dirs, d)
	}
	shards := mustRead(t, dirs)
	s2 := shards[1]
	notAgain := func(label, tag string) bool { return label != again.Label || tag != again.Tag }
	s2.Run.Queue = slices.DeleteFunc(s2.Run.Queue, func(q record.QueueRow) bool { return notAgain(q.Label, q.Tag) })
	s2.Run.Attempts = slices.DeleteFunc(s2.Run.Attempts, func(r record.Attempt) bool { return notAgain(r.Label, r.Tag) })
	m := Merge(shards, weights.New(), 999999)
	mm := m.Run.Meta.Merge
	if len(m.NeverRan) != 0 || len(mm.Unclaimed) != 0 || len(m.Run.Queue) != len(listing) || len(m.Warnings) != 0 {
		t.Errorf("never ran %v, unclaimed %v, %d queued, warnings %q; want every listed item queued once and nothing else",
			m.NeverRan, mm.Unclaimed, len(m.Run.Queue), m.Warnings)
	}
	if len(mm.Carried) != len(mine)-1 || mm.Carried[0].Shard != 2 || mm.Parts[1].Items != len(mine) {
		t.Errorf("carried %+v, shard 2's items %d; want the %d carried of shard 2, and all %d its items", mm.Carried, mm.Parts[1].Items,
			len(mine)-1, len(mine))
	}
	for _, su := range m.Run.Meta.Suites {
		if su.Skip != "" {
			t.Errorf("merged suite %s has skip %q: its items are carried, so it ran", su.Label, su.Skip)
		}
	}
	for _, su := range verdict.Decide(m.Run) {
		for _, it := range su.Items {
			isCarried := p.ShardOf(it.Key()) == 2 && notAgain(it.Label, it.Tag)
			if it.Failed || !it.Finished || it.Carried != isCarried {
				t.Errorf("item %+v: want passed, finished, carried %v", it, isCarried)
			}
			if isCarried && (it.Seconds != 2 || !strings.Contains(it.Note, "carried: the re-run of shard 2/3 did not run it again")) {
				t.Errorf("carried item %s: %+v", it.Tag, it)
			}
		}
	}
	// The advice is made on every item's latest seconds, the carried ones' too.
	if a := MergeAdvice(m.Run.Meta.Merge, verdict.Decide(m.Run), 2); !strings.HasPrefix(a, "a 4th runner would") {
		t.Errorf("advice %q: want one, from the carried items' seconds and the others' rows", a)
	}
}

// A shard whose log dir an earlier release wrote (run.json format 2: timings.tsv
// with each outcome in outcomes.tsv, no attempts.tsv) merges with the others as if
// this release had written it: the same attempts, outcomes and shard ID, so that a
// shard job re-run under a newer release merges with an older one's shards and a
// merge learns its rows once (docs/choices.md).
func TestBuildOlderShard(t *testing.T) {
	fail := map[string]int{"torch/b": 3}
	dirs, _ := matrix(t, fail, 1, 2, 3)
	want := Merge(mustRead(t, dirs), weights.New(), 999999)
	ids := mustRead(t, dirs)

	l := logdir.Layout{Root: dirs[1]}
	run, _, err := logdir.Load(l.Root)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes strings.Builder
	for _, a := range run.Attempts {
		fmt.Fprintf(&outcomes, "%s\t%s\t%s\t%s\t%s\n", a.Label, a.Column(), a.GPU(), logdir.Secs(a.StartOff), a.Outcome)
	}
	os.WriteFile(l.OutcomesTSV(), []byte(outcomes.String()), 0o644)
	os.Remove(l.AttemptsTSV())
	m := run.Meta
	m.Format = logdir.FormatOutcomes
	if err := l.WriteMeta(&m); err != nil {
		t.Fatal(err)
	}

	older := mustRead(t, dirs)
	got := Merge(older, weights.New(), 999999)
	if diff := cmp.Diff(want.Run.Attempts, got.Run.Attempts); diff != "" {
		t.Errorf("merged attempts (-all of this release +shard 2 of an older one):\n%s", diff)
	}
	if older[1].ID != ids[1].ID {
		t.Errorf("shard 2's ID %s, read as this release wrote it %s: a merge would learn its rows again", older[1].ID, ids[1].ID)
	}
}
