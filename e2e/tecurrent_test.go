package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	var out []teTrace
	for _, f := range ckTrace(t, path) {
		if len(f) != 11 {
			t.Fatalf("bad trace line %q", strings.Join(f, "\t"))
		}
		out = append(out, teTrace{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]})
	}
	return out
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
	// The binary starts with core dumps allowed (it inherits this process's limit).
	raised := syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &raised); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_CORE, &lim) })
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
			r := sgpu(t, dir, []string{"TE_FIXTURE_TRACE=" + trace}, append(args, "ci/core.conf")...)
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

// teWidths are the GPU counts the call sites of testdata/te-current declare (0: none,
// the queue's default), by label/tag.
var teWidths = map[string]int{
	"examples/whole": 0, "core/whole": 0,
	"torch/test_numerics.ck": 0, "torch/test_numerics.ck.amax": 0, "torch/test_sanity.ck": 0,
	"torch/triton_kernels.test_norms": 0, "torch/test_fused_rope": 0, "torch/test_jit": 0,
	"jax/test_custom_call_compute.auto": 0, "jax/test_fused_attn.aotriton": 0, "jax/test_layer.auto": 0,
	"torch-mgpu/distributed.test_numerics.ck": 4, "torch-mgpu/attention.test_attention_with_cp.ck": 4,
	"torch-mgpu/distributed.test_sanity.ck": 2, "torch-mgpu/distributed.test_fusible_ops.ck": 8,
	"torch-mgpu/distributed.test_torch_fsdp2.ck": 0,
	"jax-mgpu/test_distributed_layernorm.auto":   4, "jax-mgpu/test_sanity_import.auto.mgpu": 2,
	"jax-mgpu/test_distributed_fused_attn.auto": 0,
}

// teMGPU reports whether a label of testdata/te-current is of the mGPU queue.
func teMGPU(label string) bool { return strings.HasSuffix(label, "-mgpu") }

// checkTERun checks the trace of a run of testdata/te-current on pool GPUs 0…pool-1:
// every item of the labels ran exactly once, with TE's environment: its width (the
// declared one clamped to the pool; undeclared: one GPU in the sGPU queue, the pool
// in the mGPU queue), PET_MASTER_PORT = 29600 + its first GPU, TEST_FILTER its tag
// (none for an opaque suite), its suite's JUnit prefix, its queue's switches, no
// core dumps.
func checkTERun(t *testing.T, dir string, tr []teTrace, pool int, labels ...string) {
	t.Helper()
	checkTERunAt(t, filepath.Join(dir, "test-results", "junit"), tr, pool, labels...)
}

// checkTERunAt is checkTERun for the JUnit prefix junitRoot/ (each suite's
// junitRoot/<label>/).
func checkTERunAt(t *testing.T, junitRoot string, tr []teTrace, pool int, labels ...string) {
	t.Helper()
	ran := map[string]int{}
	for _, e := range tr {
		label := filepath.Base(strings.TrimSuffix(e.prefix, "/"))
		key := label + "/" + e.tag
		ran[key]++
		declared, ok := teWidths[key]
		if !ok {
			t.Errorf("%s ran, which the fixture does not list", key)
			continue
		}
		want := min(declared, pool)
		switch {
		case declared == 0 && teMGPU(label):
			want = pool
		case declared == 0:
			want = 1
		}
		ids := strings.Split(e.gpus, ",")
		first, _ := strconv.Atoi(ids[0])
		if len(ids) != want || e.port != strconv.Itoa(29600+first) {
			t.Errorf("%s ran on GPUs %s with port %s, want %d GPUs and port 29600+%d", key, e.gpus, e.port, want, first)
		}
		wantFilter := e.tag
		if e.tag == "whole" {
			wantFilter = "unset"
		}
		if e.filter != wantFilter || e.prefix != filepath.Join(junitRoot, label)+"/" {
			t.Errorf("%s: TEST_FILTER %q, JUNITXML_PREFIX %q", key, e.filter, e.prefix)
		}
		if sw := e.sgpu + "/" + e.mgpu; teMGPU(label) && sw != "/1" || !teMGPU(label) && sw != "1/" {
			t.Errorf("%s: TEST_SGPU/TEST_MGPU %s", key, sw)
		}
		if e.ulimit != "0" {
			t.Errorf("%s: ulimit -c %s", key, e.ulimit)
		}
	}
	for key := range teWidths {
		label, _, _ := strings.Cut(key, "/")
		if slices.Contains(labels, label) && ran[key] != 1 {
			t.Errorf("%s ran %d times, want once", key, ran[key])
		}
		if !slices.Contains(labels, label) && ran[key] != 0 {
			t.Errorf("%s ran, but its suite is not in this run", key)
		}
	}
}

// TestTECurrentQueues runs testdata/te-current, TE's current ci/ in miniature, as
// TE's workflow does: the sGPU queue, the mGPU queue (--queue mgpu), and both in one
// run (--mgpu-config), on 8 GPUs and on 2, where the items declaring 4 and 8 GPUs are
// clamped to the pool with a warning naming each.
func TestTECurrentQueues(t *testing.T) {
	t.Parallel()
	sgpuLabels := []string{"examples", "torch", "jax", "core"}
	mgpuLabels := []string{"torch-mgpu", "jax-mgpu"}
	for _, c := range []struct {
		name   string
		pool   int
		args   []string
		labels []string
	}{
		{"sgpu on 8", 8, []string{"ci/ci_sgpu_queue.conf"}, sgpuLabels},
		{"mgpu on 8", 8, []string{"--queue", "mgpu", "ci/ci_mgpu_queue.conf"}, mgpuLabels},
		{"both on 8", 8, []string{"ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf"}, slices.Concat(sgpuLabels, mgpuLabels)},
		{"both on 2", 2, []string{"--mgpu-config", "ci/ci_mgpu_queue.conf", "ci/ci_sgpu_queue.conf"}, slices.Concat(sgpuLabels, mgpuLabels)},
		{"mgpu alone on 2", 2, []string{"--mgpu-config", "ci/ci_mgpu_queue.conf"}, mgpuLabels},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each its own fixture copy
			dir := fixture(t, "te-current")
			trace := filepath.Join(t.TempDir(), "trace")
			env := []string{"TE_FIXTURE_TRACE=" + trace, "JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=3"}
			r := sgpu(t, dir, env, append([]string{"run", "--gpus", strconv.Itoa(c.pool), "--arch", "gfx942"}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			checkTERun(t, dir, readTETrace(t, trace), c.pool, c.labels...)
			for _, l := range c.labels {
				merged := filepath.Join(dir, "test-results", "junit", l+".xml")
				if _, err := os.Stat(merged); err != nil {
					t.Errorf("no merged JUnit of %s: %v", l, err)
				} else if _, err := exec.LookPath("xmllint"); err == nil {
					validateJUnit(t, merged)
				}
			}
			if c.pool == 2 && slices.Contains(c.labels, "torch-mgpu") {
				for _, want := range []string{
					"warning: item torch-mgpu/distributed.test_fusible_ops.ck declares 8 GPUs (its listing line) but the pool has 2: it runs on 2",
					"warning: item jax-mgpu/test_distributed_layernorm.auto declares 4 GPUs (its listing line) but the pool has 2",
				} {
					if !strings.Contains(r.stdout, want) {
						t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
					}
				}
			}
		})
	}
}

// readWeights reads a weight table file into key → text of its seconds.
func readWeights(t *testing.T, path string) map[string]string {
	t.Helper()
	w := map[string]string{}
	for _, l := range lines(readFile(t, path)) {
		if k, v, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
			w[k] = v
		}
	}
	return w
}

// TestTECurrentWeights: TE's current tables (one per queue, arch, level and pool
// size) order the first run of both queues; the run writes its own table, in which an
// undeclared mGPU item (its width the pool) has a weight per pool size: a run on 4
// GPUs learns its 4-GPU weight beside the 8-GPU one and leaves that one as it was.
func TestTECurrentWeights(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	wdir := filepath.Join(dir, "ci-weights")
	os.MkdirAll(wdir, 0o755)
	os.WriteFile(filepath.Join(wdir, "test_weights.sgpu.gfx942.l3.g8.txt"), []byte("torch/test_jit 77.0\ncore 120.0\n"), 0o644)
	os.WriteFile(filepath.Join(wdir, "test_weights.mgpu.gfx942.l3.g8.txt"),
		[]byte("torch-mgpu/distributed.test_torch_fsdp2.ck 333.0\ntorch-mgpu/distributed.test_sanity.ck 44.0\n"), 0o644)
	// Another pool size's TE table is not this run's.
	os.WriteFile(filepath.Join(wdir, "test_weights.mgpu.gfx942.l3.g4.txt"), []byte("torch-mgpu/distributed.test_numerics.ck 55.0\n"), 0o644)
	env := []string{"TEST_LEVEL=3"}
	args := []string{"run", "--arch", "gfx942", "ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf"}
	r := sgpu(t, dir, env, append(args, "--gpus", "8", "--dry-run")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"seeded 2 weight(s) from TE's mgpu table ci-weights/test_weights.mgpu.gfx942.l3.g8.txt",
		"seeded 2 weight(s) from TE's sgpu table ci-weights/test_weights.sgpu.gfx942.l3.g8.txt",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, item := range []string{"distributed.test_torch_fsdp2.ck", "distributed.test_sanity.ck", "test_jit", "distributed.test_numerics.ck"} {
		planned := false
		for _, l := range lines(r.stdout) {
			if f := strings.Fields(l); len(f) >= 5 && f[4] == item {
				planned = true
				// The 4-GPU table is another pool's: it is not this run's weight,
				// only a prior (docs/weights.md), marked ~ with where it came from.
				prior := item == "distributed.test_numerics.ck"
				if f[1] == "unknown" || strings.HasPrefix(f[1], "~") != prior ||
					prior && !strings.HasSuffix(l, "(prior: test_weights.mgpu.gfx942.l3.g4.txt (unscaled: 0 keys in common))") {
					t.Errorf("plan line %q: want a weight, or for %s the 4-GPU table's as a prior", l, "distributed.test_numerics.ck")
				}
			}
		}
		if !planned {
			t.Errorf("no plan line for %s:\n%s", item, r.stdout)
		}
	}

	own := filepath.Join(wdir, "test_weights.gfx942.l3.txt")
	fsdp := "torch-mgpu/distributed.test_torch_fsdp2.ck"
	if r := sgpu(t, dir, env, append(args, "--gpus", "8")...); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w8 := readWeights(t, own)
	if w8[fsdp+"@g8"] == "" || w8[fsdp] != "" || w8["torch-mgpu/distributed.test_sanity.ck"] == "" || w8["jax-mgpu/test_distributed_fused_attn.auto@g8"] == "" {
		t.Fatalf("after 8 GPUs: %v", w8)
	}
	if r := sgpu(t, dir, env, append(args, "--gpus", "4")...); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w4 := readWeights(t, own)
	if w4[fsdp+"@g8"] != w8[fsdp+"@g8"] || w4[fsdp+"@g4"] == "" || w4[fsdp] != "" {
		t.Errorf("after 4 GPUs: %s@g8 %q (was %q), @g4 %q, plain %q", fsdp, w4[fsdp+"@g8"], w8[fsdp+"@g8"], w4[fsdp+"@g4"], w4[fsdp])
	}
	// TE's tables are read, never written.
	if got := readFile(t, filepath.Join(wdir, "test_weights.mgpu.gfx942.l3.g8.txt")); !strings.HasPrefix(got, "torch-mgpu/distributed.test_torch_fsdp2.ck 333.0\n") {
		t.Errorf("TE's table changed: %q", got)
	}
}

// TestTECurrentColdWidestFirst: on a first run (no weights) TE's mGPU queue runs
// widest first, as TE's run_queue.sh orders it; in listing order its whole-box
// items would wait behind the narrower ones listed before them.
func TestTECurrentColdWidestFirst(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	r := sgpu(t, dir, []string{"TEST_LEVEL=3"}, "run", "--arch", "gfx942", "--gpus", "8", "--dry-run",
		"--queue", "mgpu", "ci/ci_mgpu_queue.conf")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var widths []int
	for _, l := range lines(r.stdout) {
		f := strings.Fields(l)
		if len(f) != 5 || f[1] != "unknown" {
			continue
		}
		if w, err := strconv.Atoi(f[2]); err == nil {
			widths = append(widths, w)
		}
	}
	if len(widths) < 2 || !slices.IsSortedFunc(widths, func(a, b int) int { return b - a }) || widths[0] != 8 {
		t.Errorf("cold mGPU plan widths %v: want widest first\n%s", widths, r.stdout)
	}
}

// teLogFiles are the verdict files of testdata/te-current's suites, by label.
var teLogFiles = map[string]string{
	"examples": "examples.log", "torch": "torch.log", "jax": "jax.log", "core": "core.log",
	"torch-mgpu": "torch_mgpu.log", "jax-mgpu": "jax_mgpu.log",
}

// checkNotSelected checks the verdict files of the suites --suites left out: passing,
// saying so, as TE's gate reads them.
func checkNotSelected(t *testing.T, logs string, labels ...string) {
	t.Helper()
	for _, l := range labels {
		f := filepath.Join(logs, "suites", teLogFiles[l])
		if got := readFile(t, f); got != "not run: not selected\n" {
			t.Errorf("%s: %q", f, got)
		}
		if got := readFile(t, f+".rc"); got != "0\n" {
			t.Errorf("%s.rc: %q", f, got)
		}
	}
}

// TestTECurrentSuites: --suites (or TE_CI_SUITES, as TE's scope job sets it) runs
// only the suites it names, of either queue; each other suite passes without running
// ("not run: not selected", rc 0), is named in the report and the summary, and keeps
// its weights. Nothing selected needs no GPU; an unknown name is a usage error.
func TestTECurrentSuites(t *testing.T) {
	t.Parallel()
	confs := []string{"ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf"}
	t.Run("--suites", func(t *testing.T) {
		dir := fixture(t, "te-current")
		os.MkdirAll(filepath.Join(dir, "ci-weights"), 0o755)
		own := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l3.txt")
		os.WriteFile(own, []byte("jax/test_layer.auto 12.0\ntorch-mgpu/distributed.test_torch_fsdp2.ck@g8 5.0\ntorch-mgpu/distributed.test_sanity.ck 6.0\n"), 0o644)
		trace := filepath.Join(t.TempDir(), "trace")
		env := []string{"TE_FIXTURE_TRACE=" + trace, "JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=3", "TE_CI_SUITES=core"}
		r := sgpu(t, dir, env, append([]string{"run", "--gpus", "8", "--arch", "gfx942", "--suites", "torch, jax-mgpu"}, confs...)...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		checkTERun(t, dir, readTETrace(t, trace), 8, "torch", "jax-mgpu")
		logs := filepath.Join(dir, "test-results", "logs")
		checkNotSelected(t, logs, "examples", "jax", "core", "torch-mgpu")
		if want := "not selected (--suites), not run, passing: examples, jax, core, torch-mgpu"; !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
		if rep := readFile(t, filepath.Join(logs, "report", "schedule.md")); !strings.Contains(rep, "**4 suite(s) not selected** (`--suites`): not run, passing: `examples`, `jax`, `core`, `torch-mgpu`.") {
			t.Errorf("report lacks the not-selected suites:\n%s", rep)
		}
		w := readWeights(t, own)
		for _, k := range []string{"jax/test_layer.auto", "torch-mgpu/distributed.test_torch_fsdp2.ck@g8", "torch-mgpu/distributed.test_sanity.ck"} {
			if w[k] == "" {
				t.Errorf("the weight of %s, of a suite not selected, was pruned: %v", k, w)
			}
		}
	})
	t.Run("TE_CI_SUITES", func(t *testing.T) {
		dir := fixture(t, "te-current")
		trace := filepath.Join(t.TempDir(), "trace")
		env := []string{"TE_FIXTURE_TRACE=" + trace, "JUNITXML_PREFIX=test-results/junit/", "TEST_LEVEL=3", "TE_CI_SUITES=torch-mgpu"}
		r := sgpu(t, dir, env, append([]string{"run", "--gpus", "2", "--arch", "gfx942"}, confs...)...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		checkTERun(t, dir, readTETrace(t, trace), 2, "torch-mgpu")
		checkNotSelected(t, filepath.Join(dir, "test-results", "logs"), "examples", "torch", "jax", "core", "jax-mgpu")
	})
	t.Run("none selected", func(t *testing.T) {
		dir := fixture(t, "te-current")
		trace := filepath.Join(t.TempDir(), "trace")
		// No --gpus and no GPU here: detection would fail the run (exit 2).
		env := []string{"TE_FIXTURE_TRACE=" + trace, "TE_CI_SUITES="}
		r := sgpu(t, dir, env, append([]string{"run"}, confs...)...)
		if r.code != 0 || strings.Contains(r.stdout, "gpus:") {
			t.Fatalf("exit %d, want 0 without looking for GPUs\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if tr := readTETrace(t, trace); len(tr) != 0 {
			t.Errorf("%d items ran", len(tr))
		}
		checkNotSelected(t, filepath.Join(dir, "test-results", "logs"), sortedKeys(teLogFiles)...)
	})
	t.Run("unknown", func(t *testing.T) {
		dir := fixture(t, "te-current")
		r := sgpu(t, dir, nil, append([]string{"run", "--gpus", "2", "--suites", "torch nope"}, confs...)...)
		want := `sgpu-queue: --suites: no config defines a suite "nope" (ci/ci_sgpu_queue.conf, ci/ci_mgpu_queue.conf define examples, torch, jax, core, torch-mgpu, jax-mgpu): name suites by their labels`
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
		}
		r = sgpu(t, dir, []string{"TE_CI_SUITES=x,torch"}, append([]string{"run", "--gpus", "2"}, confs...)...)
		if r.code != 2 || !strings.Contains(r.stderr, `TE_CI_SUITES: no config defines a suite "x"`) {
			t.Errorf("exit %d, want 2 naming TE_CI_SUITES:\n%s", r.code, r.stderr)
		}
	})
}

// TestTECurrentAction: the action entry point with TE's current ci/ in miniature:
// both queues in one step (inputs config and mgpu-config), a scope's suites (input
// suites), on 8 GPUs: each selected item once with TE's environment, the others
// passing without running, named in the job summary.
func TestTECurrentAction(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	trace := filepath.Join(t.TempDir(), "trace")
	ck := filepath.Join(filepath.Dir(trace), "ck")
	env, outFile, sumFile := runner(t, dir, map[string]string{
		"config": "ci/ci_sgpu_queue.conf", "mgpu-config": "ci/ci_mgpu_queue.conf", "suites": "torch torch-mgpu,jax-mgpu",
		"gpus": "8", "arch": "gfx942", "level": "3",
		"before": teBefore, "after": teAfter, "setup-env": "TE_CI_SKIP_CK_JIT=1",
	}, "PATH="+os.Getenv("PATH"), "TE_FIXTURE_TRACE="+trace, "JUNITXML_PREFIX=test-results/junit/", "TE_FIXTURE_CK_TRACE="+ck,
		"TE_CI_CK_JIT_SNAPSHOT="+filepath.Join(filepath.Dir(trace), "ck.snapshot"))
	r := sgpu(t, dir, env, "action")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	checkTERun(t, dir, readTETrace(t, trace), 8, "torch", "torch-mgpu", "jax-mgpu")
	// The inputs before, setup-env and after: one build before the three selected
	// list suites' setups (which build nothing), one drift check after.
	var kinds []string
	for _, s := range ckTrace(t, ck) {
		kinds = append(kinds, s[0]+":"+s[len(s)-1])
	}
	if len(kinds) != 5 || !strings.HasPrefix(kinds[0], "build:") || !strings.HasPrefix(kinds[4], "list:") ||
		slices.ContainsFunc(kinds[1:4], func(k string) bool { return k != "setup:1" }) {
		t.Errorf("CK JIT steps and setups %q, want a build, three setups with TE_CI_SKIP_CK_JIT=1 and a list", kinds)
	}
	if !strings.Contains(r.stdout, "| +blob_gemm_fp8") {
		t.Errorf("the log lacks the after command's output:\n%s", r.stdout)
	}
	checkNotSelected(t, filepath.Join(dir, "test-results", "logs"), "examples", "jax", "core")
	out := parseOutputs(t, outFile)
	for _, s := range []string{`"torch-mgpu":{"rc":0,"items":5`, `"jax-mgpu":{"rc":0,"items":3`, `"core":{"rc":0,"items":0`} {
		if !strings.Contains(out["suites"], s) {
			t.Errorf("suites output lacks %s: %s", s, out["suites"])
		}
	}
	if sum := readFile(t, sumFile); !strings.Contains(sum, "**3 suite(s) not selected**") {
		t.Errorf("the job summary does not name the suites not selected:\n%.2000s", sum)
	}
}

// TestTECurrentVerify: verify lists the suites of --mgpu-config as TE's mGPU queue
// (TEST_MGPU=1) and round-trips every tag of both queues, the ones TE lists with a
// width (TE_CI_ITEM <tag> <N>) included.
func TestTECurrentVerify(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	r := sgpu(t, dir, []string{"TEST_LEVEL=3"}, "verify", "ci/ci_sgpu_queue.conf", "--mgpu-config", "ci/ci_mgpu_queue.conf")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"torch: 6 tags round-tripped, 0 mismatches", "torch-mgpu: 5 tags round-tripped, 0 mismatches", "jax-mgpu: 3 tags round-tripped, 0 mismatches"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestTECurrentShardsPooled: TE's mGPU queue over a 2-shard matrix of 4-GPU
// runners. The plan and the shards read the config as the mGPU queue; merge learns
// the items that take the whole box (undeclared width) per pool size, as a run
// does (<key>@g4), and the declared ones under their plain key; merging again
// learns nothing new.
func TestTECurrentShardsPooled(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "te-current")
	env := []string{"JUNITXML_PREFIX=test-results/junit/", "TE_FIXTURE_SLEEP=0"}
	for i := 1; i <= 2; i++ {
		logs := filepath.Join("shards", strconv.Itoa(i))
		r := sgpu(t, dir, env, "run", "--gpus", "4", "--arch", "gfx942", "--level", "3", "--queue", "mgpu",
			"--shard", strconv.Itoa(i)+"/2", "--log-dir", logs, "ci/ci_mgpu_queue.conf")
		if r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	table := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l3.txt")
	merge := func() result {
		r := sgpu(t, dir, nil, "merge", "--log-dir", "merged", "--weights", table, "shards/1", "shards/2")
		if r.code != 0 {
			t.Fatalf("merge: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		return r
	}
	merge()
	w := readWeights(t, table)
	for _, k := range []string{"torch-mgpu/distributed.test_torch_fsdp2.ck@g4", "jax-mgpu/test_distributed_fused_attn.auto@g4",
		"torch-mgpu/distributed.test_numerics.ck", "jax-mgpu/test_sanity_import.auto.mgpu"} {
		if _, ok := w[k]; !ok {
			t.Errorf("the merged table has no %s:\n%s", k, readFile(t, table))
		}
	}
	for _, k := range []string{"torch-mgpu/distributed.test_torch_fsdp2.ck", "jax-mgpu/test_distributed_fused_attn.auto"} {
		if _, ok := w[k]; ok {
			t.Errorf("the merged table keeps whole-box item %s under its plain key (mixing pool sizes):\n%s", k, readFile(t, table))
		}
	}
	before := readFile(t, table)
	r := merge()
	if after := readFile(t, table); after != before || !strings.Contains(r.stdout, "were learned by an earlier merge: not learned again") {
		t.Errorf("merging again changed the table or did not say why it learned nothing:\n%s\n--- before\n%s\n--- after\n%s", r.stdout, before, after)
	}
}
