package verdict

import (
	"os"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
)

func run(cancelled bool, timings ...logdir.Timing) *logdir.Run {
	return &logdir.Run{
		Meta: logdir.Meta{Cancelled: cancelled, Suites: []logdir.MetaSuite{
			{Label: "torch", LogFile: "torch.log", Mode: "list"},
			{Label: "core", LogFile: "core.log", Mode: "opaque"},
		}},
		Queue: []logdir.QueueRow{
			{Label: "torch", Tag: "a"}, {Label: "core"}, {Label: "torch", Tag: "b"}, {Label: "torch", Tag: "c/d"},
		},
		Timings: timings,
	}
}

func TestDecide(t *testing.T) {
	r := run(false,
		logdir.Timing{Label: "torch", Item: "a", GPU: "0", Secs: 2, RC: 0},
		logdir.Timing{Label: "core", Item: "whole", GPU: "1", Secs: 5, RC: 2},
		logdir.Timing{Label: "torch", Item: "b", GPU: "0", Secs: 1, RC: 139, Incomplete: true},
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
	if core.Failed != 1 || core.RC != 2 || core.Items[0].Line() != "FAIL rc=2 items/core.whole.log" {
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
	s := Decide(run(true, logdir.Timing{Label: "torch", Item: "a", Secs: 2, RC: 143, Incomplete: true}))
	if n := s[0].Items[0].Note; n != "cancelled" {
		t.Errorf("note %q", n)
	}
	if n := s[0].Items[1].Note; n != "cancelled before it started" {
		t.Errorf("note %q", n)
	}
}

func TestWrite(t *testing.T) {
	l := logdir.Layout{Root: t.TempDir()}
	s := Decide(run(false, logdir.Timing{Label: "core", Item: "whole", RC: 0}))
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
