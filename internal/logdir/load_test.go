package logdir

import (
	"errors"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/err/load.out from what the code says")

// Load refuses a path that holds no run, and a log dir whose run still holds its
// lock, each with one line that names the path and the fix (the CLI prints it and
// exits 2): typed, so report and merge tell them apart without reading the text.
// The lines are pinned in testdata/err/load.out.
func TestLoadRefuses(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "plan.json")
	write(t, file, "{}\n")
	empty := filepath.Join(base, "empty")
	write(t, filepath.Join(empty, "notes.txt"), "")
	bad := Layout{Root: filepath.Join(base, "bad")}
	write(t, bad.Meta(), "{\n")
	busy := Layout{Root: filepath.Join(base, "busy")}
	lock, err := busy.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	var got strings.Builder
	for _, tc := range []struct {
		name, path string
		problem    LoadProblem // 0: an *InProgressError
	}{
		{"not there", filepath.Join(base, "nowhere"), NotThere},
		{"a file", file, NotADir},
		{"a file's subdirectory", filepath.Join(file, "logs"), NotThere},
		{"no run.json", empty, NoRun},
		{"bad run.json", bad.Root, BadRecord},
		{"run in progress", busy.Root, 0},
	} {
		_, _, err := Load(tc.path)
		var le *LoadError
		var ip *InProgressError
		switch {
		case tc.problem != 0 && (!errors.As(err, &le) || le.Problem != tc.problem):
			t.Errorf("%s: Load(%s) = %v, want a LoadError of problem %d", tc.name, tc.path, err, tc.problem)
		case tc.problem == 0 && !errors.As(err, &ip):
			t.Errorf("%s: Load(%s) = %v, want an InProgressError", tc.name, tc.path, err)
		}
		if err == nil {
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %q is not one line naming %s", tc.name, err, tc.path)
		}
		got.WriteString(tc.name + ": " + err.Error() + "\n")
	}
	out := strings.ReplaceAll(got.String(), base, "BASE")
	out = regexp.MustCompile(`pid \d+ on host [^,]*, started [^)]*`).ReplaceAllString(out, "pid PID on host HOST, started TIME")
	golden.Check(t, filepath.Join("testdata", "err", "load.out"), []byte(out), *update)

	// Once the run ends, its log dir loads.
	lock.Release()
	write(t, busy.QueueTSV(), "")
	if _, _, err := Load(busy.Root); err != nil {
		t.Errorf("after the run ended: %v", err)
	}
}

// A log dir whose run stopped before phase 2 (killed while listing) has a
// run.json and no queue.tsv: it loads with no items and a warning, so a merge can
// count that shard's items as never ran.
func TestLoadWithoutQueue(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	write(t, l.Meta(), `{"tool": "sgpu-queue", "suites": [{"label": "torch", "logfile": "torch.log", "mode": "list"}]}`)
	run, warns, err := Load(l.Root)
	if err != nil || len(run.Queue) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "no queue/queue.tsv") {
		t.Fatalf("run %+v, warnings %q, err %v", run, warns, err)
	}
}
