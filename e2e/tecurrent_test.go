package e2e

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// freePortBase is a port p with p and p+4 free on 127.0.0.1 (the rendezvous items'
// first GPUs are 0 and 4): other tests of this machine may hold 29600.
func freePortBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+4))
		l.Close()
		if err == nil {
			l2.Close()
			if p+7 <= 65535 {
				return p
			}
		}
	}
	t.Fatal("no two free ports")
	return 0
}

// TestItemPorts: two 4-GPU items running at once (each waits for the other) each
// bind their PET_MASTER_PORT, base + their first GPU id: the same port would fail
// one bind. The base comes from --port-base, else TE_CI_PORT_BASE; a bad one is a
// usage error naming it, before anything runs.
func TestItemPorts(t *testing.T) {
	dir := fixture(t, "te-current")
	if err := os.WriteFile(filepath.Join(dir, "ci", "rdv.conf"), []byte("rdv rdv.log list ci/rendezvous.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := freePortBase(t)
	for _, c := range []struct {
		name  string
		flags []string
		env   []string
	}{
		{"--port-base", []string{"--port-base", strconv.Itoa(base)}, []string{"TE_CI_PORT_BASE=1"}},
		{"TE_CI_PORT_BASE", nil, []string{"TE_CI_PORT_BASE=" + strconv.Itoa(base)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			trace, ready := filepath.Join(t.TempDir(), "trace"), t.TempDir()
			args := append([]string{"run", "--gpus", "8", "--arch", "gfx942", "--log-dir", t.TempDir()}, c.flags...)
			r := sgpu(t, dir, append(c.env, "TE_FIXTURE_TRACE="+trace, "TE_FIXTURE_DIR="+ready), append(args, "ci/rdv.conf")...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			ports := map[string]string{}
			for _, e := range readTETrace(t, trace) {
				first, _, _ := strings.Cut(e.gpus, ",")
				id, _ := strconv.Atoi(first)
				if len(strings.Split(e.gpus, ",")) != 4 || e.port != strconv.Itoa(base+id) {
					t.Errorf("%s on GPUs %s got port %s, want 4 GPUs and %d + %d", e.tag, e.gpus, e.port, base, id)
				}
				ports[e.tag] = e.port
			}
			if len(ports) != 2 || ports["rdv.a"] == ports["rdv.b"] {
				t.Errorf("ports %v, want two items on two ports", ports)
			}
		})
	}
	for _, bad := range [][]string{{"TE_CI_PORT_BASE=x"}, {"TE_CI_PORT_BASE=65530"}} {
		r := sgpu(t, dir, bad, "run", "--gpus", "8", "--arch", "gfx942", "--log-dir", t.TempDir(), "ci/rdv.conf")
		if r.code != 2 || !strings.Contains(r.stderr, "TE_CI_PORT_BASE") && !strings.Contains(r.stderr, "past 65535") {
			t.Errorf("%s: exit %d, want 2 naming it:\n%s", bad, r.code, r.stderr)
		}
	}
}
