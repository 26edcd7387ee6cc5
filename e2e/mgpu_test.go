package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/proctest"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// mgpuWidth is how many GPUs each item of testdata/e2e/ci/mgpu.conf takes on 4 GPUs.
func mgpuWidth(key string) int {
	switch key {
	case "dist-mgpu/quad", "dist-mgpu/every", "gamma":
		return 4
	case "dist-mgpu/tri":
		return 3
	case "dist-mgpu/pair.a", "dist-mgpu/pair.b", "dist-mgpu/pair.flaky":
		return 2
	}
	return 1
}

// multiGPU reports whether a suite of mgpu.conf is a multi-GPU one (gpus≠1).
func multiGPU(suite string) bool { return suite == "dist-mgpu" || suite == "gamma" }

// span is one item's run on one GPU, from the trace.
type span struct {
	key      string
	from, to int64
}

// spansByGPU pairs the trace's starts and ends; a multi-GPU item has a span on
// each of the ids it saw.
func spansByGPU(evs []event) map[string][]span {
	open := map[string]int64{}
	by := map[string][]span{}
	for _, e := range evs {
		switch e.kind {
		case "start":
			open[key(e)] = e.ns
		case "end":
			for _, g := range strings.Split(e.gpu, ",") {
				by[g] = append(by[g], span{key(e), open[key(e)], e.ns})
			}
		}
	}
	return by
}

// checkNoSharing fails when a GPU ran two items at once.
func checkNoSharing(t *testing.T, evs []event) {
	t.Helper()
	for g, ss := range spansByGPU(evs) {
		sort.Slice(ss, func(i, j int) bool { return ss[i].from < ss[j].from })
		for i := 1; i < len(ss); i++ {
			if ss[i].from < ss[i-1].to {
				t.Errorf("gpu%s runs %s and %s at once", g, ss[i-1].key, ss[i].key)
			}
		}
	}
}

// checkItems checks every item of the trace: it saw exactly its count of distinct
// GPU ids of the pool, and the GPU switch of its suite.
func checkItems(t *testing.T, evs []event) {
	t.Helper()
	for _, e := range evs {
		if e.kind != "start" {
			continue
		}
		ids := strings.Split(e.gpu, ",")
		distinct := slices.Compact(slices.Sorted(slices.Values(ids)))
		if len(ids) != mgpuWidth(key(e)) || len(distinct) != len(ids) {
			t.Errorf("%s saw HIP_VISIBLE_DEVICES=%q, want %d distinct ids", key(e), e.gpu, mgpuWidth(key(e)))
		}
		for _, id := range ids {
			if id < "0" || id > "3" || len(id) != 1 {
				t.Errorf("%s saw GPU %q, not one of the pool's", key(e), id)
			}
		}
		checkSwitch(t, e)
	}
}

// checkSwitch fails when a command of a suite did not get its suite's GPU switch.
func checkSwitch(t *testing.T, e event) {
	t.Helper()
	want := [2]string{"1", ""}
	if multiGPU(e.suite) {
		want = [2]string{"", "1"}
	}
	if got := [2]string{e.sgpu, e.mgpu}; got != want {
		t.Errorf("%s %s: TEST_SGPU=%q TEST_MGPU=%q, want %q %q", e.kind, key(e), got[0], got[1], want[0], want[1])
	}
}

// hold is one console note of GPUs held for an item.
type hold struct {
	key       string
	since, at float64
}

var holdLine = regexp.MustCompile(`(?m)^  holding GPUs for (\S+) \((\d+) GPUs\) since t\+([0-9.]+)s: by the estimates it starts at t\+([0-9.]+)s`)

func holds(console string) []hold {
	var out []hold
	for _, m := range holdLine.FindAllStringSubmatch(console, -1) {
		since, _ := strconv.ParseFloat(m[3], 64)
		at, _ := strconv.ParseFloat(m[4], 64)
		out = append(out, hold{key: m[1], since: since, at: at})
	}
	return out
}

// checkBackfill checks every hold of a run against its timings: no item that
// started during the hold on a GPU the held item then took ran past the
// reservation by its weight (the backfill rule:
// docs/suites.md#multi-gpu-suites). The
// rule is the scheduler's, on the weights; the warm run gives the items weights
// thirty times what they sleep (writeScaledSleeps), so that a breach of the rule is
// seconds by the weights while the delays of a loaded machine (an item's process
// starts a moment after the scheduler started it; the console rounds to the tenth,
// or to the second from 10 s) stay well inside backfillSlack. An item the scheduler
// started before the hold, and whose process started after it, ends by its weight
// no later than the reservation plus that delay: the reservation counts it. The
// run calibrates its estimates as items finish (docs/performance.md: here about a
// thirtieth of the weights once three items ended): an estimate is the weight ×
// its suite's factor at the end of the run (run.json), which holds or overstates
// the one the scheduler went by (the factor only falls here, the items being
// thirty times shorter than their weights).
func checkBackfill(t *testing.T, logs, console string) {
	t.Helper()
	const backfillSlack = 2.0 // seconds by the weights
	run, warns, err := logdir.Load(logs)
	if err != nil || len(warns) > 0 {
		t.Fatalf("%v %v", err, warns)
	}
	factor := map[string]float64{}
	for _, f := range run.Meta.Calibration {
		factor[f.Label] = f.Factor
	}
	last := map[string]record.Attempt{}
	for _, r := range run.Attempts {
		last[r.Label+"/"+r.Column()] = r
	}
	hs := holds(console)
	if len(hs) == 0 {
		t.Fatalf("no GPUs were held for a wide item: the test checks nothing\n%s", console)
	}
	for _, h := range hs {
		k := strings.TrimSuffix(h.key, "/") // an opaque item is its label
		held, ok := last[k]
		if !ok {
			held, ok = last[k+"/whole"]
		}
		if !ok {
			t.Errorf("held item %s has no timings row", h.key)
			continue
		}
		for _, x := range run.Attempts {
			est := x.Estimate
			if !x.Known || x.StartOff == held.StartOff && x.ItemID == held.ItemID || x.StartOff < h.since || x.StartOff >= held.StartOff {
				continue
			}
			if f, ok := factor[x.Label]; ok {
				est *= f
			}
			shares := slices.ContainsFunc(x.GPUs, func(g string) bool { return slices.Contains(held.GPUs, g) })
			if shares && x.StartOff+est > h.at+backfillSlack {
				t.Errorf("%s/%s started at t+%.3f on gpu%s while GPUs were held for %s (reservation t+%.1f): by its weight %.2f s it ends after it; %s started at t+%.3f",
					x.Label, x.Column(), x.StartOff, x.GPU(), h.key, h.at, est, h.key, held.StartOff)
			}
		}
	}
}

// mgpuSleeps are the seconds each item of ci/mgpu.conf sleeps (testdata/e2e/ci:
// dist.sh, solo.sh, gamma.sh), by weight key.
func mgpuSleeps() map[string]float64 {
	w := map[string]float64{
		"dist-mgpu/tri": 0.8, "dist-mgpu/pair.a": 0.6, "dist-mgpu/pair.b": 0.6, "dist-mgpu/quad": 0.5, "dist-mgpu/every": 0.3,
		"dist-mgpu/pair.flaky": 0.2, "dist/s.a": 0.3, "dist/s.b": 0.2, "solo/long": 1.2, "solo/mid": 0.9, "gamma": 0.7,
	}
	for i := 0; i < 20; i++ {
		w[fmt.Sprintf("solo/s.%02d", i)] = 0.15
	}
	return w
}

// writeScaledSleeps writes the run's weight table as f times what each item
// sleeps: weights made, not measured, so that the order planned on them is the
// same on an idle machine and a loaded one.
func writeScaledSleeps(t *testing.T, path string, f float64) {
	t.Helper()
	tb := weights.New()
	for k, v := range mgpuSleeps() {
		tb.Set(k, v*f)
	}
	var b strings.Builder
	if err := tb.Format(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// One queue for single- and multi-GPU items on 4 fake GPUs (docs/performance.md,
// "Multi-GPU items"), run three times: cold (every item unknown, a 2-GPU item that fails once
// and is retried), then warm with the default order (chosen on the weights) and with lpt.
func TestMultiGPURun(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	trace := filepath.Join(dir, "trace.tsv")
	logs := filepath.Join(dir, "test-results", "logs")
	env := []string{"SGPU_TRACE=" + trace, "SGPU_STATE=" + t.TempDir(), "TRACE_LIST=1", "TEST_LEVEL=1", "JUNITXML_PREFIX=test-results/junit/"}
	run := func(t *testing.T, more ...string) (result, []event) {
		t.Helper()
		os.Remove(trace)
		args := append([]string{"run", "--gpus", "0,1,2,3", "--arch", "gfx942", "--retries", "1"}, more...)
		r := sgpu(t, dir, env, append(args, "ci/mgpu.conf")...)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		evs := readTrace(t, trace)
		checkNoSharing(t, evs)
		checkItems(t, evs)
		return r, evs
	}

	t.Run("cold", func(t *testing.T) {
		r, evs := run(t)
		starts := map[string][]string{}
		var lists, setups []event
		for _, e := range evs {
			switch e.kind {
			case "start":
				starts[key(e)] = append(starts[key(e)], e.gpu)
			case "list":
				lists = append(lists, e)
			case "setup":
				setups = append(setups, e)
			}
		}
		if len(starts) != 31 {
			t.Errorf("%d items ran, want 31: %v", len(starts), sortedKeys(starts))
		}
		for k, gpus := range starts {
			if want := 1 + btoi(k == "dist-mgpu/pair.flaky"); len(gpus) != want {
				t.Errorf("%s started %d times, want %d", k, len(gpus), want)
			}
		}
		// The retry of the failed 2-GPU item avoids the GPUs it failed on.
		if f := starts["dist-mgpu/pair.flaky"]; len(f) == 2 {
			for _, g := range strings.Split(f[1], ",") {
				if slices.Contains(strings.Split(f[0], ","), g) {
					t.Errorf("the retry ran on gpu%s, the first attempt failed on gpu%s", f[1], f[0])
				}
			}
		}
		// Listings (queue and census) and setups: each suite's switch, a
		// multi-GPU suite's pinned to its first GPUs.
		pins := map[string]string{"dist-mgpu": "0,1", "dist": "0", "solo": "0"}
		count := map[string]int{}
		for _, e := range append(lists, setups...) {
			checkSwitch(t, e)
			count[e.kind+" "+e.suite]++
			if e.gpu != pins[e.suite] {
				t.Errorf("%s of %s pinned to %q, want %q", e.kind, e.suite, e.gpu, pins[e.suite])
			}
		}
		for _, s := range []string{"dist-mgpu", "dist", "solo"} {
			if count["list "+s] != 2 || count["setup "+s] != 1 {
				t.Errorf("%s: %d listings, %d setups; want 2 and 1 (%v)", s, count["list "+s], count["setup "+s], count)
			}
		}
		timings := readFile(t, filepath.Join(logs, "queue", "timings.tsv"))
		if !strings.Contains(timings, "dist-mgpu\tquad\t0,1,2,3\t") || !strings.Contains(timings, "gamma\twhole\t0,1,2,3\t") {
			t.Errorf("timings.tsv does not list the 4-GPU items' ids:\n%s", timings)
		}
		if !strings.Contains(r.stdout, "] gpu0,1,2,3 t+") || !strings.Contains(r.stdout, "flaky: dist-mgpu pair.flaky passed on attempt 2") {
			t.Errorf("console:\n%s", r.stdout)
		}
		md := readFile(t, filepath.Join(logs, "report", "schedule.md"))
		if !strings.Contains(md, "| total work (GPU time: seconds × GPUs) |") || !strings.Contains(md, "on 4 GPUs :") {
			t.Errorf("the report does not count GPU time or draw a block across its lanes:\n%s", md)
		}
		if svg := readFile(t, filepath.Join(logs, "report", "timeline.svg")); !strings.Contains(svg, "4 GPUs 0,1,2,3, t+") {
			t.Errorf("the SVG has no multi-GPU bar")
		}
		validateJUnit(t, filepath.Join(dir, "test-results", "junit", "dist-mgpu.xml"))
	})

	// The warm runs plan on weights written from what the items sleep, never on the
	// ones the cold run measured: an order chosen on durations a loaded machine
	// measured would be the load's. The first on thirty times the sleeps
	// (checkBackfill says why).
	table := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")
	writeScaledSleeps(t, table, 30)
	t.Run("warm, widest first", func(t *testing.T) {
		r, _ := run(t)
		for _, want := range []string{"  policy planned: multi-GPU items: widest first", "   #   estimate  gpus  suite        item", "in GPU-seconds (GPUs × weight)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the plan lacks %q:\n%s", want, r.stdout)
			}
		}
		checkBackfill(t, logs, r.stdout)
		// Thirty times shorter than their weights: the run calibrated its
		// estimates, says so in the report, and learned the raw durations.
		run, _, err := logdir.Load(logs)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Meta.Calibration) == 0 || run.Meta.Calibration[0].Factor > 0.2 {
			t.Errorf("run.json calibration %+v, want the suites at about a thirtieth", run.Meta.Calibration)
		}
		if md := readFile(t, filepath.Join(logs, "report", "schedule.md")); !strings.Contains(md, "**Estimates during the run.** Each estimate") {
			t.Errorf("the report does not say the calibration:\n%s", md)
		}
	})

	// Longest first puts the 4-GPU item behind long single-GPU items and ahead of a
	// stream of short ones: GPUs are held for it, so it starts before the stream
	// ends instead of after it (no starvation).
	// The backfill rule is checked above: here the weights are the sleeps
	// themselves, so a hold's window of backfill (the blocking items' weights) is
	// shorter than the stream, which then waits behind the 4-GPU item.
	t.Run("warm, longest first", func(t *testing.T) {
		writeScaledSleeps(t, table, 1)
		r, evs := run(t, "--policy", "lpt")
		var quad, streamEnd int64
		for _, e := range evs {
			switch {
			case e.kind == "start" && key(e) == "dist-mgpu/quad":
				quad = e.ns
			case e.kind == "end" && e.suite == "solo" && strings.HasPrefix(e.tag, "s."):
				streamEnd = max(streamEnd, e.ns)
			}
		}
		if quad == 0 || quad >= streamEnd {
			t.Errorf("the 4-GPU item started at %d, the stream of 1-GPU items ended at %d: starved\n%s", quad, streamEnd, r.stdout)
		}
		// Which 4-GPU item (quad, gamma, or every: the table has no weight of
		// its own for the two that take the whole pool, every has its suite's
		// median as a prior) meets busy GPUs at the head of the queue depends
		// on when the long items end on a loaded machine; one of them must have
		// been held for.
		if !slices.ContainsFunc(holds(r.stdout), func(h hold) bool {
			return slices.Contains([]string{"dist-mgpu/quad", "gamma", "dist-mgpu/every"}, h.key)
		}) {
			t.Errorf("no GPUs were held for a 4-GPU item:\n%s", r.stdout)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// An item that declares more GPUs than the pool (its listing line, its suite's
// gpus=) is clamped to the pool with a warning naming it, TE's rule, dry run or
// not: it runs, on every GPU of the pool, once.
func TestMultiGPUTooWide(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	os.WriteFile(filepath.Join(dir, "wide.conf"), []byte("wide  wide.log  list,gpus=3  ci/dist.sh\n"), 0o644)
	for _, dry := range []bool{false, true} {
		trace := filepath.Join(t.TempDir(), "trace.tsv")
		args := []string{"run", "--gpus", "0,1", "--arch", "gfx942", "--log-dir", t.TempDir(), "ci/mgpu.conf", "wide.conf"}
		if dry {
			args = append(args, "--dry-run")
		}
		// pair.flaky fails its first run unless its state file is there: this
		// test is about widths, so it is; without SGPU_STATE the file went to /,
		// and the test passed only where an earlier run had left it.
		state := t.TempDir()
		if err := os.WriteFile(filepath.Join(state, "flaky.pair.flaky"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := sgpu(t, dir, []string{"SGPU_TRACE=" + trace, "SGPU_STATE=" + state, "TEST_LEVEL=1"}, args...)
		if r.code != 0 {
			t.Fatalf("dry run %v: exit %d\n%s%s", dry, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"warning: item dist-mgpu/tri declares 3 GPUs (its listing line) but the pool has 2: it runs on 2, so cases that need more skip",
			"warning: item dist-mgpu/quad declares 4 GPUs (its listing line) but the pool has 2",
			`warning: suite "wide" says gpus=3 at wide.conf:1 but the pool has 2: its 4 items run on 2, so cases that need more skip`,
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("dry run %v: stdout lacks %q:\n%s", dry, want, r.stdout)
			}
		}
		evs := readTrace(t, trace)
		if dry {
			for _, e := range evs {
				if e.kind == "start" || e.kind == "setup" {
					t.Errorf("dry run: %s %s ran", e.kind, key(e))
				}
			}
			continue
		}
		checkNoSharing(t, evs)
		ran := map[string]int{}
		for _, e := range evs {
			if e.kind == "start" {
				ran[key(e)]++
				if w := len(strings.Split(e.gpu, ",")); mgpuWidth(key(e)) > 1 && w != 2 {
					t.Errorf("%s ran on %q, want both GPUs", key(e), e.gpu)
				}
			}
		}
		// The trace names both suites' items dist-mgpu (ci/dist.sh names its
		// multi-GPU section so): each runs once for dist-mgpu and once for wide.
		for _, k := range []string{"dist-mgpu/tri", "dist-mgpu/quad", "dist-mgpu/pair.a"} {
			if ran[k] != 2 {
				t.Errorf("%s ran %d times, want twice (once per suite)", k, ran[k])
			}
		}
	}
}

// One uses: step runs TE's single- and multi-GPU suites together: the demo's copies
// of TE's ci/pytorch.sh and ci/jax.sh as torch and jax (ci/sgpu.conf) and, with
// TEST_MGPU, as torch-mgpu (2 GPUs each) and jax-mgpu (every GPU; ci/mgpu.conf), on
// the demo's 4 fake GPUs. Every multi-GPU item runs once, on its count of distinct
// GPUs, told so by its switch; the single-GPU items run on one GPU each.
func TestActionSingleAndMultiGPUSuites(t *testing.T) {
	t.Parallel()
	dir, _, out := demoAtLevel1(t, "ci/sgpu.conf ci/mgpu.conf")
	for _, s := range []string{`"torch-mgpu":{"rc":0,"items":3`, `"jax-mgpu":{"rc":0,"items":2`, `"torch":{"rc":0,"items":8`} {
		if !strings.Contains(out["suites"], s) {
			t.Errorf("suites output lacks %s: %s", s, out["suites"])
		}
	}
	logs := filepath.Join(dir, "test-results", "logs")
	width := map[string]int{"torch-mgpu": 2, "jax-mgpu": 4}
	want := map[string]bool{
		"torch-mgpu/distributed.test_numerics": true, "torch-mgpu/distributed.test_fusible_ops": true,
		"torch-mgpu/test_fused_optimizer":     true, // distributed.test_torch_fsdp2 is level 3
		"jax-mgpu/test_distributed_layernorm": true, "jax-mgpu/test_multigpu_encoder": true,
	}
	ran := map[string]int{}
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		f := strings.Split(row, "\t")
		k := f[0] + "/" + f[1]
		ran[k]++
		ids := strings.Split(f[2], ",")
		n := max(width[f[0]], 1)
		if len(ids) != n || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != n {
			t.Errorf("%s ran on gpu %q, want %d distinct GPUs", k, f[2], n)
		}
		if f[1] == "whole" {
			continue
		}
		log := readFile(t, filepath.Join(logs, "items", f[0]+"."+f[1]+".log"))
		multi := strings.Contains(log, " (multi-GPU)")
		if !strings.Contains(log, "running "+f[1]+" on "+f[2]+" for ") || multi != (width[f[0]] > 0) {
			t.Errorf("%s's log does not say it ran on %s with its suite's switch:\n%s", k, f[2], log)
		}
	}
	for k := range want {
		if ran[k] != 1 {
			t.Errorf("%s ran %d times, want once", k, ran[k])
		}
	}
	if len(ran) != 19 {
		t.Errorf("%d items ran, want 19: %v", len(ran), sortedKeys(ran))
	}
	// The figures the step outputs count GPU-seconds: a 4-GPU item's second is four.
	var gpuSecs, largest float64
	for _, row := range lines(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		f := strings.Split(row, "\t")
		secs, _ := strconv.ParseFloat(f[3], 64)
		gpuSecs += secs * float64(len(strings.Split(f[2], ",")))
		largest = max(largest, secs)
	}
	var wall, util, bound float64
	fmtSscan(out["wall-seconds"], &wall)
	fmtSscan(out["utilisation"], &util)
	fmtSscan(out["lower-bound-seconds"], &bound)
	if want := 100 * gpuSecs / (wall * 4); wall <= 0 || math.Abs(util-want) > 0.1*want {
		t.Errorf("utilisation %q, want about %.1f (%.1f GPU-seconds over %.1f s on 4 GPUs)", out["utilisation"], want, gpuSecs, wall)
	}
	if want := max(gpuSecs/4, largest); math.Abs(bound-want) > 0.15 {
		t.Errorf("lower-bound-seconds %q, want max(GPU-seconds/4, largest) = %.2f", out["lower-bound-seconds"], want)
	}
}

// A cancel during a multi-GPU item stops its process group and the child that left
// it (setsid): nothing survives the run, and the item is recorded cancelled on both
// of its GPUs.
func TestMultiGPUCancel(t *testing.T) {
	dir := fixture(t, "procs")
	mark := proctest.Mark()
	started := filepath.Join(dir, "started")
	var out strings.Builder
	cmd := procsRun(t, dir, mark, []string{"ITEMS=escape plain", "STARTED=" + started},
		"run", "--gpus", "0,1,2", "--arch", "gfx942", "--grace", "1s", "ci/block.conf")
	startUntil(t, cmd, &out, started)
	cmd.Process.Signal(syscall.SIGTERM)
	code := finish(t, cmd, &out)
	proctest.NoSurvivors(t, mark)
	if code == 0 {
		t.Errorf("exit 0 after a cancel\n%s", out.String())
	}
	logs := filepath.Join(dir, "test-results", "logs")
	if !regexp.MustCompile(`(?m)^block\tescape\t0\t[0-2],[0-2]\t.*\tcancelled$`).MatchString(readFile(t, filepath.Join(logs, "queue", "attempts.tsv"))) {
		t.Errorf("attempts.tsv:\n%s", readFile(t, filepath.Join(logs, "queue", "attempts.tsv")))
	}
	if v := readFile(t, filepath.Join(logs, "suites", "block.log")); !strings.Contains(v, "items/block.escape.log (cancelled)") {
		t.Errorf("verdict:\n%s", v)
	}
}

// verify lists and re-enters a multi-GPU suite with its switch, and a listing
// line's GPU count is not part of the tag it round-trips.
func TestMultiGPUVerify(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	r := sgpu(t, dir, []string{"TEST_LEVEL=1"}, "verify", "ci/mgpu.conf")
	if r.code != 0 || !strings.Contains(r.stdout, "dist-mgpu: 6 tags round-tripped, 0 mismatches") || !strings.Contains(r.stdout, "dist: 2 tags round-tripped, 0 mismatches") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
