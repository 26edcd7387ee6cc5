package verdict

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

func run(cancelled bool, attempts ...record.Attempt) *record.Run {
	return &record.Run{
		Meta: record.Meta{Cancelled: cancelled, Suites: []record.MetaSuite{
			{Label: "torch", LogFile: "torch.log", Mode: "list"},
			{Label: "core", LogFile: "core.log", Mode: "opaque"},
		}},
		Queue: []record.QueueRow{
			{ItemID: record.ItemID{Label: "torch", Tag: "a"}}, {ItemID: record.ItemID{Label: "core"}}, {ItemID: record.ItemID{Label: "torch", Tag: "b"}}, {ItemID: record.ItemID{Label: "torch", Tag: "c/d"}},
		},
		Attempts: attempts,
	}
}

func TestDecide(t *testing.T) {
	r := run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Secs: 2, RC: 0, Outcome: outcome.OK},
		record.Attempt{ItemID: record.ItemID{Label: "core"}, GPUs: []string{"1"}, Secs: 5, RC: 2, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "b"}, GPUs: []string{"0"}, Secs: 1, RC: 139, Outcome: outcome.CutOff},
	)
	s := Decide(r)
	if len(s) != 2 {
		t.Fatal(len(s))
	}
	torch, core := s[0], s[1]
	if torch.Failed != 2 || torch.RC != 139 || len(torch.Items) != 3 || torch.Seconds != 3 {
		t.Errorf("torch %+v", torch)
	}
	wantLines := []string{
		"ok rc=0 items/torch.a.log",
		"FAIL rc=139 items/torch.b.log (cut off)",
		"FAIL rc=- items/torch.c_d~",
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(torch.Items[i].Line(), w) {
			t.Errorf("line %d = %q, want %q", i, torch.Items[i].Line(), w)
		}
	}
	if !strings.HasSuffix(torch.Items[2].Line(), "(never finished)") {
		t.Errorf("missing rc note: %q", torch.Items[2].Line())
	}
	// The item's own 2 stays in its line; its suite's rc says 1 (2 is the tool's).
	if core.Failed != 1 || core.RC != 1 || core.Items[0].Line() != "FAIL rc=2 items/core.whole.log" {
		t.Errorf("core %+v", core)
	}
	if got := ExitCode(s); got != 139 {
		t.Errorf("exit %d", got)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		rcs  []int // suite rc; a suite with rc 0 passes
		want int
	}{
		{nil, 0},
		{[]int{0, 0}, 0},
		{[]int{2}, 1}, // 2 keeps one meaning: usage error
		{[]int{2, 1}, 1},
		{[]int{3, 2}, 3},
		{[]int{137, 1}, 137},
		{[]int{143, 1}, 143}, // a suite's 143 is a cancelled item's: suiteRC mapped an own one
		{[]int{130}, 130},
		{[]int{300}, 255},
	}
	for _, tt := range tests {
		var s []Suite
		for _, rc := range tt.rcs {
			su := Suite{RC: rc}
			if rc != 0 {
				su.Failed = 1
			}
			s = append(s, su)
		}
		if got := ExitCode(s); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.rcs, got, tt.want)
		}
	}
}

func TestCancelledNotes(t *testing.T) {
	s := Decide(run(true, record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, Secs: 2, RC: 143, Outcome: outcome.Cancelled}))
	if n := s[0].Items[0].Note; n != "cancelled" {
		t.Errorf("note %q", n)
	}
	if it := s[0].Items[1]; it.Note != "cancelled before it started" || it.RC != exitcode.Interrupted {
		t.Errorf("item %+v", it)
	}
}

func TestWrite(t *testing.T) {
	l := logdir.Layout{Root: t.TempDir()}
	s := Decide(run(false, record.Attempt{ItemID: record.ItemID{Label: "core"}, RC: 0, Outcome: outcome.OK}))
	if err := Write(l, s); err != nil {
		t.Fatal(err)
	}
	rc, _ := os.ReadFile(l.SuiteRC("torch.log"))
	core, _ := os.ReadFile(l.SuiteLog("core.log"))
	coreRC, _ := os.ReadFile(l.SuiteRC("core.log"))
	if string(rc) != "1\n" || string(core) != "ok rc=0 items/core.whole.log\n" || string(coreRC) != "0\n" {
		t.Errorf("files: %q %q %q", rc, core, coreRC)
	}
}

// Each outcome of an item's last attempt, as its verdict line, its suite's rc and
// the run's exit code see it. An exit code of 124 or 137 alone is never "timed out".
func TestDecideOutcomes(t *testing.T) {
	tests := []struct {
		o        outcome.Outcome
		rc       int
		line     string
		suiteRC  int
		exitCode int
	}{
		{outcome.OK, 0, "ok rc=0 items/torch.a.log", 0, 0},
		{outcome.Failed, 3, "FAIL rc=3 items/torch.a.log", 3, 3},
		{outcome.Failed, 124, "FAIL rc=124 items/torch.a.log", 124, 124},
		{outcome.Failed, 137, "FAIL rc=137 items/torch.a.log", 137, 137},
		{outcome.Failed, 70, "FAIL rc=70 items/torch.a.log", 1, 1},
		{outcome.Failed, 2, "FAIL rc=2 items/torch.a.log", 1, 1},
		{outcome.Failed, 130, "FAIL rc=130 items/torch.a.log", 1, 1},
		{outcome.Failed, 143, "FAIL rc=143 items/torch.a.log", 1, 1},
		{outcome.CutOff, 143, "FAIL rc=143 items/torch.a.log (cut off)", 1, 1},
		{outcome.Timeout, 124, "FAIL rc=124 items/torch.a.log (timed out)", 124, 124},
		{outcome.Cancelled, 143, "FAIL rc=143 items/torch.a.log (cancelled)", 143, 143},
		{outcome.CutOff, 139, "FAIL rc=139 items/torch.a.log (cut off)", 139, 139},
		{outcome.CutOff, 0, "FAIL rc=0 items/torch.a.log (cut off)", 1, 1},
		{outcome.CutOff, 137, "FAIL rc=137 items/torch.a.log (cut off)", 137, 137},
		{outcome.Unavailable, 137, "FAIL rc=137 items/torch.a.log (unavailable: where it ran went away)", 137, 137},
		{outcome.NoRun, 0, "FAIL rc=0 items/torch.a.log (no-run: its re-entry ran nothing)", 1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s rc %d", tt.o, tt.rc), func(t *testing.T) {
			r := run(false, record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Secs: 2, RC: tt.rc, Outcome: tt.o})
			r.Queue = r.Queue[:1]
			s := Decide(r)
			it := s[0].Items[0]
			if it.Line() != tt.line || it.Outcome != tt.o || it.Failed != tt.o.Failed() {
				t.Errorf("item %+v\nline %q, want %q", it, it.Line(), tt.line)
			}
			if s[0].RC != tt.suiteRC || s[0].Passed() != tt.o.Passed() {
				t.Errorf("suite rc %d passed %v, want %d", s[0].RC, s[0].Passed(), tt.suiteRC)
			}
			if got := ExitCode(s); got != tt.exitCode {
				t.Errorf("exit code %d, want %d", got, tt.exitCode)
			}
		})
	}
}

// A recorded outcome wins over what the exit code would suggest.
func TestDecideReadsTheOutcome(t *testing.T) {
	s := Decide(run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, RC: 124, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "b"}, RC: 0, Outcome: outcome.NoRun},
	))
	if it := s[0].Items[0]; it.Note != "" || it.Outcome != outcome.Failed {
		t.Errorf("an item that exited 124 by itself: %+v", it)
	}
	if it := s[0].Items[1]; !it.Failed || it.Outcome != outcome.NoRun {
		t.Errorf("a no-run passed: %+v", it)
	}
}

// Items that never finished say why, from the typed stop reason; items never
// started because of a cancel count as exitcode.Interrupted.
func TestUnfinishedByStopReason(t *testing.T) {
	tests := []struct {
		stop      *record.Stop
		cancelled bool
		note      string
		rc        int
	}{
		{nil, false, "never finished", 1},
		{nil, true, "cancelled before it started", exitcode.Interrupted},
		{&record.Stop{Reason: outcome.StopCancelled, Phase: 3}, true, "cancelled before it started", exitcode.Interrupted},
		{&record.Stop{Reason: outcome.StopQuarantined, Message: "every GPU is quarantined (gpu0)", Phase: 4}, false, "never ran: every GPU was quarantined", 1},
		// The message no longer decides: a reason does.
		{&record.Stop{Reason: outcome.StopUnavailable, Message: "every GPU is quarantined", Phase: 4}, false, "never ran: where items run went away", 1},
		{&record.Stop{Reason: outcome.StopInternal, Phase: 4}, false, "not recorded: sgpu-queue stopped on an internal error", 1},
		{&record.Stop{Message: "from an older log dir", Phase: 4}, false, "never ran: the run stopped early", 1},
	}
	for _, tt := range tests {
		r := run(tt.cancelled)
		r.Meta.Stop = tt.stop
		s := Decide(r)
		it := s[0].Items[0]
		if it.Note != tt.note || it.RC != tt.rc || !it.Failed || it.Finished || s[0].RC != tt.rc {
			t.Errorf("stop %+v: item %+v suite rc %d; want note %q rc %d", tt.stop, it, s[0].RC, tt.note, tt.rc)
		}
	}
}

// A cancel during listing: no suite knows its items, every suite fails with one
// line saying so, and the run exits as interrupted.
func TestUnlistedSuites(t *testing.T) {
	r := run(true)
	r.Queue = nil
	r.Meta.Stop = &record.Stop{Reason: outcome.StopCancelled, Message: "cancelled while listing", Phase: 1}
	s := Decide(r)
	for _, su := range s {
		if !su.Unlisted || su.Passed() || su.RC != exitcode.Interrupted || len(su.Items) != 0 {
			t.Errorf("suite %+v", su)
		}
	}
	if got := ExitCode(s); got != exitcode.Interrupted {
		t.Errorf("exit %d", got)
	}
	l := logdir.Layout{Root: t.TempDir()}
	if err := Write(l, s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"torch.log", "core.log"} {
		log, _ := os.ReadFile(l.SuiteLog(f))
		rc, _ := os.ReadFile(l.SuiteRC(f))
		if string(log) != UnlistedLine+"\n" || string(rc) != "130\n" {
			t.Errorf("%s: %q, rc %q", f, log, rc)
		}
	}
	// A run that stopped in phase 4 with an empty suite is not "unlisted".
	r.Meta.Stop.Phase = 4
	if Decide(r)[0].Unlisted {
		t.Error("a phase-4 stop marked a suite unlisted")
	}
}

// Retried items: a pass after failures is flaky (or, when the failures were all on
// a GPU later quarantined, not); a no-run or cut-off earlier attempt counts as a
// failure even with rc 0.
func TestDecideRetries(t *testing.T) {
	r := run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, RC: 0, Outcome: outcome.CutOff},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"1"}, RC: 0, Outcome: outcome.OK},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "b"}, GPUs: []string{"2"}, RC: 1, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "b"}, GPUs: []string{"0"}, RC: 0, Outcome: outcome.OK},
	)
	r.Meta.Quarantined = []record.Quarantined{{GPU: "2"}}
	r.Meta.FlakyIsFailure = true
	s := Decide(r)
	a, b := s[0].Items[0], s[0].Items[1]
	if !a.Flaky || !a.Failed || a.RC != 1 || a.Note != "flaky: passed on attempt 2, counted as a failure" {
		t.Errorf("a %+v", a)
	}
	if b.Flaky || b.Failed || b.Note != "passed after gpu2 was quarantined" {
		t.Errorf("b %+v", b)
	}
}

// Multi-GPU items: an item quarantine left unrun, or not run again, says why; an
// earlier failure on a block that held a quarantined GPU counts as on that GPU;
// suite work counts GPU time.
func TestDecideMultiGPU(t *testing.T) {
	r := run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"1", "2"}, Secs: 3, RC: 1, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0", "3"}, Secs: 3, RC: 0, Outcome: outcome.OK},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "b"}, GPUs: []string{"0", "1", "3"}, Secs: 2, RC: 4, Outcome: outcome.Failed},
	)
	r.Meta.Quarantined = []record.Quarantined{{GPU: "2"}}
	r.Meta.Unfit = []record.Unfit{{ItemID: record.ItemID{Label: "torch", Tag: "b"}, GPUs: 4, Pool: 3}, {ItemID: record.ItemID{Label: "torch", Tag: "c/d"}, GPUs: 4, Pool: 3}}
	s := Decide(r)
	a, b, cd := s[0].Items[0], s[0].Items[1], s[0].Items[2]
	if a.Failed || a.Flaky || a.Note != "passed after gpu2 was quarantined" || a.GPU != "0,3" {
		t.Errorf("a %+v", a)
	}
	if !b.Failed || b.RC != 4 || b.Note != "not run again: needs 4 GPUs, quarantine left 3" {
		t.Errorf("b %+v", b)
	}
	if !cd.Failed || cd.Finished || cd.Note != "never ran: needs 4 GPUs, quarantine left 3" || cd.Line() != "FAIL rc=- items/torch.c_d~"+strings.Split(cd.LogRel, "~")[1]+" (never ran: needs 4 GPUs, quarantine left 3)" {
		t.Errorf("c/d %+v, line %q", cd, cd.Line())
	}
	if s[0].Seconds != 8 || s[0].GPUSeconds != 18 {
		t.Errorf("suite seconds %v, GPU-seconds %v; want 8 and 18", s[0].Seconds, s[0].GPUSeconds)
	}
}

// In a merged run an item without a row fails by its own shard's story: "never
// ran" with the typed stop reason not-reported when its shard never reported,
// its shard's stop reason or cancel otherwise, and rc 130 only for a cancelled
// shard's items.
func TestDecideMerged(t *testing.T) {
	r := run(false, record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Shard: 1, Secs: 2, Outcome: outcome.OK})
	r.Meta.Merge = &record.Merge{Shards: 3, Parts: []record.MergedShard{
		{Shard: 1, Reported: true, Finished: true},
		{Shard: 2, Stop: &record.Stop{Reason: outcome.StopNotReported, Message: "no log dir"}},
		{Shard: 3, Reported: true, Finished: true, Cancelled: true, Stop: &record.Stop{Reason: outcome.StopCancelled, Phase: 4}},
	}}
	r.ShardOf = map[record.ItemID]int{
		{Label: "torch", Tag: "a"}: 1, {Label: "core"}: 2,
		{Label: "torch", Tag: "b"}: 3, {Label: "torch", Tag: "c/d"}: 1,
	}
	s := Decide(r)
	torch, core := s[0], s[1]
	tests := []struct {
		it    Item
		stop  outcome.Stop
		rc    int
		shard int
		note  string
	}{
		{torch.Items[0], "", 0, 1, ""},
		{core.Items[0], outcome.StopNotReported, exitcode.Failed, 2, "never ran: shard 2/3 never reported"},
		{torch.Items[1], outcome.StopCancelled, exitcode.Interrupted, 3, "cancelled before it started"},
		{torch.Items[2], "", exitcode.Failed, 1, "never ran: shard 1/3 wrote no row for it"},
	}
	for _, tc := range tests {
		if tc.it.Stop != tc.stop || tc.it.RC != tc.rc || tc.it.Shard != tc.shard || tc.it.Note != tc.note {
			t.Errorf("%s/%s: stop %q rc %d shard %d note %q; want %q %d %d %q", tc.it.Label, tc.it.Tag, tc.it.Stop, tc.it.RC, tc.it.Shard, tc.it.Note, tc.stop, tc.rc, tc.shard, tc.note)
		}
	}
	if got := ExitCode(s); got != exitcode.Interrupted {
		t.Errorf("exit %d, want %d (the largest: the cancelled shard's item)", got, exitcode.Interrupted)
	}
}

// In a merged run a quarantined GPU is named with its shard in the notes, as in
// every other place ("s2:1", not "gpus2:1").
func TestQuarantineNoteNamesTheShard(t *testing.T) {
	r := run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"1"}, Shard: 2, RC: 1, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Shard: 2, RC: 0, Outcome: outcome.OK},
	)
	r.Meta.Quarantined = []record.Quarantined{{GPU: "s2:1"}}
	if a := Decide(r)[0].Items[0]; a.Failed || a.Note != "passed after s2:1 was quarantined" {
		t.Errorf("a %+v", a)
	}
}

// An item started when it has a timings row, or when its log is there (it was
// running as its run died); one without either never started, and has no log to
// show (the report and the summary say "never started").
func TestStarted(t *testing.T) {
	r := run(false, record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, RC: 1, Outcome: outcome.Failed})
	r.Dir = t.TempDir()
	l := logdir.Layout{Root: r.Dir}
	if err := os.MkdirAll(l.ItemsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.ItemLog("torch", "b"), []byte("half a log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Decide(r)
	want := map[string]bool{"torch/a": true, "torch/b": true, "torch/c/d": false, "core/": false}
	for _, su := range s {
		for _, it := range su.Items {
			if k := it.Label + "/" + it.Tag; it.Started != want[k] {
				t.Errorf("%s: started %v, want %v", k, it.Started, want[k])
			}
		}
	}
}

// A run that stopped because a suite's listing failed: that suite fails with the
// recorded reason (its verdict file says it), the others were never listed; the
// exit code is 1.
func TestBrokenSuite(t *testing.T) {
	r := run(false)
	r.Queue = nil
	r.Meta.Finished = true
	r.Meta.Stop = &record.Stop{Reason: outcome.StopListingFailed, Phase: 1, Suite: "core", Message: `c.conf:2: suite "core": its queue listing exited with 4`}
	s := Decide(r)
	torch, core := s[0], s[1]
	if core.Broken != `its listing failed: c.conf:2: suite "core": its queue listing exited with 4` || core.RC != 1 || core.Passed() {
		t.Errorf("core %+v", core)
	}
	if torch.Broken != "" || !torch.Unlisted || torch.RC != 1 {
		t.Errorf("torch %+v", torch)
	}
	if code := ExitCode(s); code != exitcode.Failed {
		t.Errorf("exit %d", code)
	}
	l := logdir.Layout{Root: t.TempDir()}
	if err := Write(l, s); err != nil {
		t.Fatal(err)
	}
	if v, _ := os.ReadFile(l.SuiteLog("core.log")); string(v) != "FAIL rc=1 ("+core.Broken+")\n" {
		t.Errorf("core.log %q", v)
	}
}

// What the re-run state keeps of an item (Latest) is what a merge decides a
// carried item from, both ways: the outcome, rc, seconds, GPUs and attempts of
// its latest run, and what its verdict made of them.
func TestLatestRoundTrip(t *testing.T) {
	r := run(false,
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0", "1"}, Secs: 3, RC: 1, Outcome: outcome.Failed},
		record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"2", "3"}, Secs: 2, Outcome: outcome.OK})
	kept := Decide(r)[0].Items[0].Latest()
	want := record.Carried{ItemID: record.ItemID{Label: "torch", Tag: "a"}, Result: record.Result{Outcome: outcome.OK, Flaky: true, Seconds: 2, Width: 2, Tries: 2}}
	if kept != want {
		t.Fatalf("kept %+v, want %+v", kept, want)
	}
	merged := run(false)
	merged.Meta.Merge = &record.Merge{Shards: 2, Carried: []record.Carried{kept}}
	again := Decide(merged)[0].Items[0]
	if !again.Carried || again.Latest() != kept {
		t.Errorf("carried into a merge, it reads back as %+v (carried %v), want %+v", again.Latest(), again.Carried, kept)
	}
}
