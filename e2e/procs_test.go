package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/proctest"
)

// The processes of testdata/procs run "sleep $MARK" (proctest.Mark): a sleep longer
// than any run should take, so that a run that waits for one is caught by runGuard.

// runGuard bounds a run of the procs fixture: far above what it needs, below the
// 40 s of the sleeps it must not wait for.
const runGuard = 35 * time.Second

// procsRun starts the binary on the procs fixture; env is added to a clean
// environment with MARK set.
func procsRun(t *testing.T, dir, mark string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("pgrep"); err != nil {
		t.Skip("PGREP MISSING: the procs fixture needs it (apt-get install procps)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), runGuard)
	t.Cleanup(cancel)
	t.Cleanup(func() { proctest.Kill(mark) }) // whatever the test found, leave nothing running
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "MARK=" + mark}, env...)
	return cmd
}

// startUntil starts a run of the procs fixture with its output in out and waits
// until the file started exists (an item created it: it runs).
func startUntil(t *testing.T, cmd *exec.Cmd, out *strings.Builder, started string) {
	t.Helper()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(runGuard); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared: the item never started\n%s", started, out.String())
		}
	}
}

// finish waits for a run and returns its exit code; a run past runGuard (killed) fails.
func finish(t *testing.T, cmd *exec.Cmd, out fmt.Stringer) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws := ee.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			t.Fatalf("the run was killed after %s: it hung\n%s", runGuard, out)
		} else if ws.Signaled() {
			t.Fatalf("the run died of %v\n%s", ws.Signal(), out)
		}
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "panic:") || strings.Contains(s, "DATA RACE") {
		t.Fatalf("the binary panicked or raced:\n%s", s)
	}
	return 0
}

// An item, a listing and a setup end when their script exits, whatever they left
// behind: a background child in the item's group, or out of it with setsid, holding
// the output or not. The run neither waits for them nor lets them outlive it; each is
// named in a warning; the durations learned are the scripts' own.
func TestLeftBehindProcesses(t *testing.T) {
	dir := fixture(t, "procs")
	mark := proctest.Mark()
	var out strings.Builder
	cmd := procsRun(t, dir, mark, []string{"ITEMS=plain group setsid setsid-quiet", "LISTING=leave", "SETUP=leave"},
		"run", "--gpus", "2", "--arch", "gfx942", "ci/left.conf")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := finish(t, cmd, &out); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out.String())
	}
	proctest.NoSurvivors(t, mark)
	console := out.String()
	for _, want := range []string{
		`warning: suite "left" queue listing left a process holding its output after it exited: pid `,
		`warning: suite "left" census listing left a process holding its output after it exited: pid `,
		`warning: suite "left" setup left a process holding its output after it exited: pid `,
		"warning: item left/group left a process holding its output after it exited: pid ",
		"(sleep " + mark + "; outside its process group); killed",
		"warning: item left/setsid-quiet left a process running after it exited: pid ",
	} {
		if !strings.Contains(console, want) {
			t.Errorf("console lacks %q:\n%s", want, console)
		}
	}
	if strings.Contains(console, "left/plain left") {
		t.Errorf("the item that left nothing was warned about:\n%s", console)
	}
	logs := filepath.Join(dir, "test-results", "logs")
	for _, tag := range []string{"group", "setsid", "setsid-quiet"} {
		log := readFile(t, filepath.Join(logs, "items", "left."+tag+".log"))
		if !strings.HasPrefix(log, "item "+tag+" done\n") || !strings.Contains(log, "\nsgpu-queue: left a process") {
			t.Errorf("log of %s: want its output, then the note:\n%s", tag, log)
		}
	}
	secs := map[string]float64{}
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		f := strings.Split(row, "\t")
		v, _ := strconv.ParseFloat(f[3], 64)
		secs[f[1]] = v
		if f[4] != "0" {
			t.Errorf("row %q: rc %s, want 0", row, f[4])
		}
	}
	for _, tag := range []string{"plain", "group", "setsid", "setsid-quiet"} {
		// The script takes 0.3 s; its background sleep 40 s or more.
		if s, ok := secs[tag]; !ok || s > 20 {
			t.Errorf("%s recorded %v s (found %v), want the script's own duration", tag, s, ok)
		}
	}
}

// A listing or a setup that hangs is stopped at its deadline with its process tree;
// the run stops (exit 1) naming the suite, with the tail of the output.
func TestListingAndSetupDeadlines(t *testing.T) {
	tests := []struct {
		name, env, flag string
		want            []string
	}{
		{"listing", "LISTING=hang", "--list-timeout", []string{
			`ci/left.conf:2: suite "left": its queue listing (TE_CI_LIST_ITEMS=1) did not end within 1s (list-timeout) and was stopped`,
			"    | probing fp8 support",
		}},
		{"setup", "SETUP=hang", "--setup-timeout", []string{
			`ci/left.conf:2: suite "left" setup (TE_CI_SETUP_ONLY=1) did not end within 1s (setup-timeout) and was stopped; log test-results/logs/prerequisite_ck_jit_status/left.log:`,
			"    | pip install: building wheel for transformer_engine",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, "procs")
			mark := proctest.Mark()
			var out, errb strings.Builder
			cmd := procsRun(t, dir, mark, []string{"ITEMS=plain", tt.env},
				"run", "--gpus", "1", "--arch", "gfx942", "--grace", "200ms", tt.flag, "1s", "ci/left.conf")
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := finish(t, cmd, &errb); code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
			}
			proctest.NoSurvivors(t, mark)
			for _, want := range tt.want {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errb.String())
				}
			}
		})
	}
}

// SIGHUP stops a run as SIGTERM does (the terminal or ssh session went away): the
// running item is stopped (TERM, KILL after the grace; --grace 0: at once), nothing
// survives, and every file is written. A zero grace is no grace, not the default 20 s.
func TestHangupAndZeroGrace(t *testing.T) {
	tests := []struct {
		name  string
		sig   syscall.Signal
		grace string
	}{
		{"SIGHUP", syscall.SIGHUP, "1s"},
		{"SIGTERM", syscall.SIGTERM, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" grace "+tt.grace, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, "procs")
			mark := proctest.Mark()
			started := filepath.Join(dir, "started")
			var out strings.Builder
			cmd := procsRun(t, dir, mark, []string{"ITEMS=hang plain", "STARTED=" + started},
				"run", "--gpus", "1", "--arch", "gfx942", "--grace", tt.grace, "ci/left.conf")
			startUntil(t, cmd, &out, started)
			sent := time.Now()
			cmd.Process.Signal(tt.sig)
			code := finish(t, cmd, &out)
			took := time.Since(sent)
			proctest.NoSurvivors(t, mark)
			if code != 137 {
				t.Errorf("exit %d, want 137 (the item that ignored TERM, killed)\n%s", code, out.String())
			}
			// Under the 20 s the old 0 meant, whatever the machine's speed: that
			// grace alone would take 20 s after the signal.
			if tt.grace == "0" && took >= 20*time.Second {
				t.Errorf("the run took %s after the signal with --grace 0 (the old 0 meant 20 s)", took)
			}
			if !strings.Contains(out.String(), "sgpu-queue: "+tt.name+": stopping dispatch") {
				t.Errorf("console:\n%s", out.String())
			}
			logs := filepath.Join(dir, "test-results", "logs")
			if rc := readFile(t, filepath.Join(logs, "suites", "left.log.rc")); rc != "137\n" {
				t.Errorf("left.log.rc = %q, want 137", rc)
			}
			if v := readFile(t, filepath.Join(logs, "suites", "left.log")); !strings.Contains(v, "(cancelled before it started)") {
				t.Errorf("the item never run is not marked:\n%s", v)
			}
			if r := readFile(t, filepath.Join(logs, "report", "schedule.md")); !strings.Contains(r, "cancelled") {
				t.Errorf("report does not say the run was cancelled")
			}
		})
	}
}

// A console that goes away (the run piped into tee, and tee died) does not stop the
// run: it is said once on stderr, the run goes on, writes every file and exits with
// its own code (here the failing item's 3; SIGPIPE would be 141). Both faces.
func TestClosedConsole(t *testing.T) {
	for _, face := range []string{"run", "action"} {
		t.Run(face, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, "procs")
			mark := proctest.Mark()
			env := []string{"ITEMS=fail plain group"}
			args := []string{"run", "--gpus", "1", "--arch", "gfx942", "ci/left.conf"}
			if face == "action" {
				e, _, _ := runner(t, dir, map[string]string{"config": "ci/left.conf", "gpus": "1", "arch": "gfx942"})
				env, args = append(env, e...), []string{"action"}
			}
			cmd := procsRun(t, dir, mark, env, args...)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb strings.Builder
			cmd.Stdout, cmd.Stderr = w, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			// The reader takes the first line and goes away.
			bufio.NewReader(r).ReadString('\n')
			r.Close()
			code := finish(t, cmd, &errb)
			proctest.NoSurvivors(t, mark)
			if code != 3 {
				t.Errorf("exit %d, want the run's own 3\n%s", code, errb.String())
			}
			if n := strings.Count(errb.String(), "sgpu-queue: console output lost (write /dev/stdout: broken pipe); the run goes on"); n != 1 {
				t.Errorf("the lost console is said %d times, want once:\n%s", n, errb.String())
			}
			logs := filepath.Join(dir, "test-results", "logs")
			if rc := readFile(t, filepath.Join(logs, "suites", "left.log.rc")); rc != "3\n" {
				t.Errorf("left.log.rc = %q, want 3", rc)
			}
			for _, f := range []string{"report/schedule.md", "queue/run.json", "items/left.plain.log.rc"} {
				if _, err := os.Stat(filepath.Join(logs, f)); err != nil {
					t.Errorf("not written: %v", err)
				}
			}
			if meta := readFile(t, filepath.Join(logs, "queue", "run.json")); !strings.Contains(meta, `"finished": true`) {
				t.Errorf("run.json does not say the run finished:\n%s", meta)
			}
		})
	}
}

// A dry run does not hold the listings' stderr in memory: 100 MiB of it leave the
// process's peak memory far below that (it was 830 MB), and nothing is written.
func TestDryRunListingStderrNotHeld(t *testing.T) {
	const noise = 100 << 20
	dir := fixture(t, "procs")
	var out strings.Builder
	cmd := procsRun(t, dir, proctest.Mark(), []string{"ITEMS=plain", "LISTING=noisy", "NOISE=" + strconv.Itoa(noise)},
		"run", "--dry-run", "--gpus", "1", "--arch", "gfx942", "ci/left.conf")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := finish(t, cmd, &out); code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("peak RSS %d MiB for %d MiB of listing stderr (two passes)", peak>>20, noise>>20)
	if peak > noise {
		t.Errorf("peak RSS %d MiB: the listing's stderr is held in memory", peak>>20)
	}
	if _, err := os.Stat(filepath.Join(dir, "test-results")); err == nil {
		t.Error("the dry run wrote test-results/")
	}
}
