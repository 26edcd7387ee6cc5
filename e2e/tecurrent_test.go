package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// teTrace is one line of testdata/te-current's trace: what one item was given.
type teTrace struct {
	script, tag, gpus, port, filter, prefix, sgpu, mgpu, ulimit, skipSetup, pwd string
}

func readTETrace(t *testing.T, path string) []teTrace {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []teTrace
	for _, l := range lines(string(data)) {
		f := strings.Split(l, "\t")
		if len(f) != 11 {
			t.Fatalf("bad trace line %q", l)
		}
		out = append(out, teTrace{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]})
	}
	return out
}

// sgpuShell runs the binary as sgpu does, through sh with prelude run first (to set
// a limit the binary then inherits).
func sgpuShell(t *testing.T, dir, prelude string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", prelude + `; exec "$0" "$@"`, binary}, args...)...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestCoreDumpsOff: every command the run starts (listing, setup, items) has
// RLIMIT_CORE 0 however sgpu-queue was started; with --core-dumps the limit it was
// started with (raised here to the hard limit) is what the items see.
func TestCoreDumpsOff(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max == 0 {
		t.Skip("the hard RLIMIT_CORE is 0 here: core dumps cannot be allowed")
	}
	dir := fixture(t, "te-current")
	conf := filepath.Join(dir, "ci", "core.conf")
	if err := os.WriteFile(conf, []byte("core core.log opaque ci/core.sh\ntorch torch.log list ci/pytorch.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
		want  func(string) bool
	}{
		{"default", nil, func(s string) bool { return s == "0" }},
		{"--core-dumps", []string{"--core-dumps"}, func(s string) bool { return s != "0" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace")
			args := append([]string{"run", "--gpus", "2", "--arch", "gfx942", "--log-dir", t.TempDir()}, c.flags...)
			r := sgpuShell(t, dir, "ulimit -S -c unlimited", []string{"TE_FIXTURE_TRACE=" + trace}, append(args, "ci/core.conf")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			tr := readTETrace(t, trace)
			if len(tr) != 7 { // core's one and torch's six
				t.Fatalf("%d items ran, want 7: %v", len(tr), tr)
			}
			for _, e := range tr {
				if !c.want(e.ulimit) {
					t.Errorf("%s %s saw ulimit -c %q", e.script, e.tag, e.ulimit)
				}
			}
		})
	}
}
