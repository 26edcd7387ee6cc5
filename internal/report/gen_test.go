package report

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/simulate"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// The fixture runs under testdata/runs are written by this generator, once, from the
// measured TE table: `go test ./internal/report -run TestGenerateFixtures -gen`.
// It simulates the dispatcher (one worker per GPU pulling the next item in queue
// order) on chosen "actual" durations and writes what the engine writes: run.json,
// queue.tsv and timings.tsv (rows in the order items end).
var gen = flag.Bool("gen", false, "regenerate the fixture runs in testdata/runs from TE's measured table")

// teWeights is TE's measured table, committed once for every test that needs it.
const teWeights = "../../testdata/simulate/te-gfx950-l3.weights"

// simItem is one queued item of a simulated run.
type simItem struct {
	Label, Tag string
	Est        float64 // the weight it was ordered by
	Known      bool
	Actual     float64
	RC         int
	// Outcome is as dispatch would decide it; "" means ok for rc 0, else failed.
	Outcome outcome.Outcome
	// GPUs is how many GPUs it takes (0: one).
	GPUs int
	// Retried: its first attempt failed, and a second, at the back, passed.
	Retried bool
}

func (it simItem) outcome() outcome.Outcome {
	switch {
	case it.Outcome != "":
		return it.Outcome
	case it.RC != 0:
		return outcome.Failed
	}
	return outcome.OK
}

func (it simItem) ID() record.ItemID { return record.ItemID{Label: it.Label, Tag: it.Tag} }

func (it simItem) key() string { return it.ID().Key() }

// estimated is attempt a of the item with the estimate it was dispatched with.
func (it simItem) estimated(a record.Attempt) record.Attempt {
	a.Estimate, a.Known = it.Est, it.Known
	if !it.Known {
		a.Estimate = 0
	}
	return a
}

// simRun is a run to simulate and write.
type simRun struct {
	Suites   []record.MetaSuite
	Cmds     map[string]string
	GPUs     []string
	Items    []simItem // in queue order (the caller orders them)
	CancelAt float64   // 0: not cancelled
	Started  time.Time
	Old      *weights.Table // the table before the run, for the weight changes
	Pruned   []string
	// Quarantined GPUs, whose reasons are prose the report must escape.
	Quarantined []record.Quarantined
	// TimeoutFactor is the hang deadline in force (run.json).
	TimeoutFactor float64
	// Legacy writes the run as sgpu-queue did before outcomes were recorded: no
	// attempts.tsv (nor outcomes.tsv), no format in run.json.
	Legacy bool
	// JUnit is the XML some items wrote (suite label → tag → file); write merges
	// each suite's with junit.Merge into junit/<label>.xml, which run.json lists.
	JUnit map[string]map[string]string
	// Sidecars are more files beside the items' XML (suite label → file name →
	// content): TE's .failed and .partial.
	Sidecars map[string]map[string]string
	// Files are more files of the log dir (path relative to it → content): item
	// logs, an earlier attempt's log and XML.
	Files map[string]string
	// Base is the base branch's record the action restored (run.json's base_tests).
	Base *record.BaseTests
}

// order sorts items longest estimate first, unknown items (the default weight) first
// of all; ties keep their order, as the planner does.
func order(items []simItem) {
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Known != items[j].Known {
			return !items[i].Known
		}
		return items[i].Est > items[j].Est
	})
}

// simulate runs the dynamic pull (with multi-GPU items: the default block
// scheduler) and returns the attempts in the order they end.
func (sr simRun) simulate() ([]record.Attempt, float64) {
	for _, it := range sr.Items {
		if it.GPUs > 1 {
			return sr.simulateBlocks()
		}
	}
	free := make([]float64, len(sr.GPUs))
	var rows []record.Attempt
	wall := 0.0
	for i, it := range sr.Items {
		g := 0
		for k := range free {
			if free[k] < free[g] {
				g = k
			}
		}
		// A few milliseconds between an item's end and the next start, as measured on
		// the demo (process start, log open, timings append).
		start := free[g] + 0.002 + 0.001*float64(i%4)
		if i < len(sr.GPUs) {
			start = 0.001 * float64(i+1)
		}
		if sr.CancelAt > 0 && start >= sr.CancelAt {
			continue
		}
		end := start + it.Actual
		rc, o := it.RC, it.outcome()
		if sr.CancelAt > 0 && end > sr.CancelAt {
			end, rc, o = sr.CancelAt+1.5, 143, outcome.Cancelled // SIGTERM, then the grace period
		}
		free[g] = end
		wall = max(wall, end)
		rows = append(rows, it.estimated(record.Attempt{
			ItemID: it.ID(), GPUs: []string{sr.GPUs[g]},
			Secs: round3(end - start), RC: rc, StartOff: round3(start), EndOff: round3(end), Outcome: o,
		}))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].EndOff < rows[j].EndOff })
	return rows, round3(wall + 0.004)
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// simulateBlocks replays the items, in their order, through the scheduler the run
// uses for a workload with multi-GPU items (schedule.NewBlocks), on their actual
// durations, with a dispatch gap of a few milliseconds before each start.
func (sr simRun) simulateBlocks() ([]record.Attempt, float64) {
	items := make([]schedule.Item, len(sr.Items))
	durs := make([]float64, len(sr.Items))
	order := make([]int, len(sr.Items))
	for i, it := range sr.Items {
		items[i] = schedule.Item{ItemID: it.ID(), Weight: it.Est, Known: it.Known, Seq: i, GPUs: it.GPUs}
		durs[i] = it.Actual + 0.003
		order[i] = i
	}
	b, err := schedule.NewBlocks(items, order, len(sr.GPUs))
	if err != nil {
		panic(err)
	}
	tl, err := schedule.ReplayBlocks(b, schedule.Widths(items), durs, len(sr.GPUs))
	if err != nil {
		panic(err)
	}
	var rows []record.Attempt
	for i, it := range sr.Items {
		ids := make([]string, len(tl.GPUs[i]))
		for k, g := range tl.GPUs[i] {
			ids[k] = sr.GPUs[g]
		}
		start := round3(tl.Start[i] + 0.003)
		end := round3(start + it.Actual)
		rows = append(rows, it.estimated(record.Attempt{
			ItemID: it.ID(), GPUs: ids, Secs: round3(end - start), RC: it.RC, StartOff: start, EndOff: end, Outcome: it.outcome(),
		}))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].EndOff < rows[j].EndOff })
	return rows, round3(tl.Wall + 0.004)
}

// mixedRun is TE's single-GPU table plus the synthetic multi-GPU items of
// testdata/simulate/te-mixed.weights as a warm run on 8 GPUs, in the default
// queue's order (widest first, then longest), durations off their estimates by a
// seeded lognormal factor, and a 2-GPU item that fails.
func mixedRun(t *testing.T) simRun {
	f, err := os.Open(teMixed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, warns, err := simulate.Load(f, teMixed)
	if err != nil || len(warns) > 0 {
		t.Fatalf("%s: %v %v", teMixed, err, warns)
	}
	rng := rand.New(rand.NewPCG(11, 95))
	old := weights.New()
	var items []simItem
	labels := map[string]bool{}
	var suites []record.MetaSuite
	for _, i := range schedule.BlockOrder(in.Items, schedule.ByWidest) {
		it := in.Items[i]
		old.Set(it.Key(), it.Weight)
		s := simItem{Label: it.Label, Tag: it.Tag, Est: it.Weight, Known: true, GPUs: it.GPUs,
			Actual: round3(it.Weight * math.Exp(0.08*rng.NormFloat64()))}
		if it.Key() == "jax-mgpu/test_distributed_layernorm" {
			s.Actual, s.RC = 41.7, 1
		}
		items = append(items, s)
	}
	for _, it := range in.Items {
		if !labels[it.Label] {
			labels[it.Label] = true
			mode := "list"
			if it.Tag == "" {
				mode = "opaque"
			}
			suites = append(suites, record.MetaSuite{Label: it.Label, LogFile: strings.ReplaceAll(it.Label, "-", "_") + ".log", Mode: mode})
		}
	}
	cmds := map[string]string{"torch-mgpu": "ci/pytorch.sh", "jax-mgpu": "ci/jax.sh"}
	for k, v := range teCmds {
		cmds[k] = v
	}
	return simRun{Suites: suites, Cmds: cmds, GPUs: []string{"0", "1", "2", "3", "4", "5", "6", "7"}, Items: items, Started: t0, Old: old}
}

const teMixed = "../../testdata/simulate/te-mixed.weights"

// write writes the run's files under dir (replacing them).
func (sr simRun) write(dir string) error {
	l := logdir.Layout{Root: dir}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(l.QueueDir(), 0o755); err != nil {
		return err
	}
	rows, wall := sr.simulate()
	rows, wall = te99Retry(sr, rows, wall)
	for rel, data := range sr.Files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return err
		}
	}
	var q []record.QueueRow
	for _, it := range sr.Items {
		w := it.Est
		if !it.Known {
			w = 999999
		}
		q = append(q, record.QueueRow{ItemID: it.ID(), Weight: w, Cmd: sr.Cmds[it.Label]})
	}
	var tb, ab bytes.Buffer
	for _, t := range rows {
		tb.WriteString(logdir.FormatTiming(t))
		ab.WriteString(logdir.FormatAttempt(t))
	}
	if err := os.WriteFile(l.QueueTSV(), logdir.FormatQueue(q), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(l.TimingsTSV(), tb.Bytes(), 0o644); err != nil {
		return err
	}
	if !sr.Legacy {
		if err := os.WriteFile(l.AttemptsTSV(), ab.Bytes(), 0o644); err != nil {
			return err
		}
	}
	var ms []weights.Measurement
	for _, t := range rows {
		o := t.Outcome
		if sr.Legacy {
			o = outcome.Legacy(t.RC, t.Outcome.Incomplete(), sr.CancelAt > 0)
		}
		if m, ok := weights.Measure(t.Key(), t.Secs, o); ok {
			ms = append(ms, m)
		}
	}
	old := sr.Old
	if old == nil {
		old = weights.New()
	}
	var changes []record.Change
	for _, c := range weights.Learn(old.Clone(), ms) {
		if !c.Kept {
			changes = append(changes, record.Change{Key: c.Key, Old: round3(c.Old), HadOld: c.HadOld, New: round3(c.New)})
		}
	}
	m := &record.Meta{
		Tool: "sgpu-queue", Suites: sr.Suites, GPUs: sr.GPUs, PinVar: "HIP_VISIBLE_DEVICES",
		Arch: "gfx950", Level: "3", DefaultWeight: 999999, Weights: "ci-weights/test_weights.gfx950.l3.txt",
		Started: sr.Started, Wall: wall, Finished: true, Cancelled: sr.CancelAt > 0,
		Changes: changes, Pruned: sr.Pruned, Quarantined: sr.Quarantined, BaseTests: sr.Base,
		BadDay: record.BadDay{TimeoutFactor: sr.TimeoutFactor},
	}
	junitFiles, err := sr.writeJUnit(dir)
	if err != nil {
		return err
	}
	m.JUnit = junitFiles
	if !sr.Legacy {
		m.Format = logdir.FormatAttempts
		if m.Cancelled {
			m.Stop = &record.Stop{Reason: outcome.StopCancelled, Message: "the run was cancelled with 66 item(s) left to run", Phase: 4}
		}
	}
	return l.WriteMeta(m)
}

// writeJUnit merges each suite's item files of sr.JUnit as the engine does, into
// dir/junit/<label>.xml, and returns those paths relative to dir.
func (sr simRun) writeJUnit(dir string) ([]string, error) {
	var labels []string
	for l := range sr.JUnit {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var rels []string
	for _, label := range labels {
		src, err := os.MkdirTemp("", "sgpu-gen-junit-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(src)
		for tag, xml := range sr.JUnit[label] {
			if err := os.WriteFile(filepath.Join(src, tag+".xml"), []byte(xml), 0o644); err != nil {
				return nil, err
			}
		}
		for name, data := range sr.Sidecars[label] {
			if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
				return nil, err
			}
		}
		su := verdict.Suite{Label: label}
		for _, it := range sr.Items {
			if it.Label == label {
				o := it.outcome()
				note := ""
				if o == outcome.Timeout {
					note = "timed out"
				}
				su.Items = append(su.Items, verdict.Item{ItemID: it.ID(), GPU: "0", Finished: true, Note: note,
					Result: record.Result{Seconds: it.Actual, RC: it.RC, Outcome: o, Failed: !o.Passed()}})
			}
		}
		doc, err := junit.Merge(context.Background(), su, junit.Source{Dir: src}, time.Time{})
		if err != nil {
			return nil, err
		}
		rel := "junit/" + label + ".xml"
		if err := os.MkdirAll(filepath.Join(dir, "junit"), 0o755); err != nil {
			return nil, err
		}
		if err := doc.WriteFile(dir, filepath.Join(dir, rel)); err != nil {
			return nil, err
		}
		rels = append(rels, rel)
	}
	return rels, nil
}

var teSuites = []record.MetaSuite{
	{Label: "examples", LogFile: "examples.log", Mode: "opaque"},
	{Label: "torch", LogFile: "torch.log", Mode: "list"},
	{Label: "jax", LogFile: "jax.log", Mode: "list"},
	{Label: "core", LogFile: "core.log", Mode: "opaque"},
}

var teCmds = map[string]string{
	"examples": ".github/scripts/run_examples.sh", "torch": "ci/pytorch.sh", "jax": "ci/jax.sh", "core": "ci/core.sh",
}

var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// teRun is the TE table as a warm run on 4 GPUs: estimates are the table, actual
// durations deviate by a seeded lognormal factor (σ ≈ 8 %), with a few real misses.
func teRun(table *weights.Table) simRun {
	rng := rand.New(rand.NewPCG(3, 80))
	slow := map[string]float64{
		"torch/test_numerics.ck.triton":    1.45, // a kernel-cache miss
		"jax/test_fused_attn.auto.v2":      0.62,
		"examples":                         1.2,
		"torch/test_fusible_ops.ck.triton": 1.9,
	}
	var items []simItem
	for _, k := range table.Keys() {
		w, _ := table.Get(k)
		id := record.ParseItemID(k)
		label, tag := id.Label, id.Tag
		f := math.Exp(0.08 * rng.NormFloat64())
		if s, ok := slow[k]; ok {
			f = s
		}
		items = append(items, simItem{Label: label, Tag: tag, Est: w, Known: true, Actual: round3(w * f)})
	}
	order(items)
	return simRun{
		Suites: teSuites, Cmds: teCmds, GPUs: []string{"0", "1", "2", "3"}, Items: items,
		Started: t0, Old: table, Pruned: []string{"jax/test_sharding_old.auto", "torch/test_removed.ck"},
	}
}

func loadTE(t *testing.T) *weights.Table {
	t.Helper()
	data, err := os.ReadFile(teWeights)
	if err != nil {
		t.Fatal(err)
	}
	table, warns := weights.Parse(bytes.NewReader(data), teWeights)
	if len(warns) > 0 || table.Len() != 80 {
		t.Fatalf("%s: %d keys, warnings %v", teWeights, table.Len(), warns)
	}
	return table
}

func find(items []simItem, key string) *simItem {
	for i := range items {
		if items[i].key() == key {
			return &items[i]
		}
	}
	panic("no item " + key)
}

// fixtures are the committed runs, by directory name.
func fixtures(t *testing.T, table *weights.Table) map[string]simRun {
	out := map[string]simRun{}
	out["te-mixed"] = mixedRun(t)
	out["te80"] = teRun(table)

	// Every outcome but cancelled (te80-cancelled has those) and unavailable.
	f := failuresRun(table)
	f.Items = append(f.Items,
		// Listed, but its re-entry is gated off on this runner: exit 0, no XML.
		simItem{Label: "torch", Tag: "test_gemm.gated", Actual: 0.4, Outcome: outcome.NoRun})
	order(f.Items)
	gemm := find(f.Items, "torch/test_gemm_autotune.ck")
	gemm.Actual, gemm.RC, gemm.Outcome = 111, 124, outcome.Timeout // hung: killed at 3 × its weight of 37 s
	f.JUnit = failuresJUnit()
	out["te80-failures"] = f

	// The same failures as a log dir of an older sgpu-queue (no outcomes.tsv): rc
	// 124 and the .partial are read by the legacy rule (cut off, never "timed out").
	legacy := failuresRun(table)
	legacy.Legacy = true
	out["te80-legacy"] = legacy

	c := teRun(table)
	c.CancelAt = 1500
	c.Pruned = nil
	out["te80-cancelled"] = c

	out["hostile"] = hostileRun()
	return out
}

// failuresJUnit is what the failed items of te80-failures wrote: pytest's XML with
// more failed cases than the report shows, messages with fences, HTML, a
// </details>, an absolute runner path and multibyte text; one case with no message
// (the report shows its body's last lines); the cut-off and hung items wrote none.
func failuresJUnit() map[string]map[string]string {
	var flash strings.Builder
	flash.WriteString(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">`)
	flash.WriteString(`<testcase classname="tests.pytorch.test_numerics" name="test_ok" time="1.0"/>`)
	msgs := []string{
		"AssertionError: Tensor-likes are not close!&#10;&#10;Mismatched elements: 3 / 4096 (0.1%)&#10;" +
			"Greatest absolute difference: 0.0625 at index (0, 7)&#10;Greatest relative difference: 0.01 at index (0, 7)&#10;more",
		"RuntimeError: see /__w/TransformerEngine/TransformerEngine/tests/pytorch/test_numerics.py:412 and ```` fence",
		"&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt; ```text\n ≥ 𝛼 ünïcödé",
		"assert 1 == 2", "assert 2 == 3", "assert 3 == 4", "assert 4 == 5",
	}
	for i, m := range msgs {
		fmt.Fprintf(&flash, `<testcase classname="tests.pytorch.test_numerics" name="test_linear[case%d]" time="0.5">`+
			`<failure message="%s">E   long traceback</failure></testcase>`, i, m)
	}
	flash.WriteString(`</testsuite></testsuites>`)
	layer := `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">` +
		`<testcase classname="tests.jax.test_layer" name="test_layer_fwd[bf16]" time="2.0"><error>Traceback (most recent call last):
  File "/__w/TransformerEngine/TransformerEngine/tests/jax/test_layer.py", line 88, in test_layer_fwd
    out = layer(x)
jaxlib.xla_extension.XlaRuntimeError: INTERNAL: hipMemcpy failed
</error></testcase></testsuite></testsuites>`
	return map[string]map[string]string{
		"torch": {"test_numerics.flash": flash.String()},
		"jax":   {"test_layer.auto": layer},
	}
}

// failuresRun is the TE run with new items and failures: a fast assertion, an item
// that exits 124 by itself (its own timeout: a failure, not a timeout of ours), a
// segfault that leaves its .partial.
func failuresRun(table *weights.Table) simRun {
	f := teRun(table)
	f.TimeoutFactor = 3
	f.Items = append(f.Items,
		simItem{Label: "torch", Tag: "test_fp8_blockwise.ck", Actual: 455},
		simItem{Label: "jax", Tag: "test_distributed_new.auto", Actual: 88.4})
	order(f.Items)
	flash := find(f.Items, "torch/test_numerics.flash")
	flash.Actual, flash.RC = 37.2, 1 // fails fast: an assertion in the first test
	layer := find(f.Items, "jax/test_layer.auto")
	layer.Actual, layer.RC = 382.5, 124 // the suite's own timeout
	mx := find(f.Items, "torch/mxfp4..ck")
	mx.Actual, mx.RC, mx.Outcome = 96.3, 139, outcome.CutOff // segfault, .partial left
	return f
}

// hostileTags are tags a suite could print: HTML, Markdown, Mermaid and SVG syntax,
// control characters, a 300-byte tag.
var hostileTags = []string{
	`<script>alert("x")</script>`,
	"a|b|c",
	"back`tick``s",
	"`leading",
	"line1\nline2",
	"tab\there",
	"\x1b[31mred\x1b[0m",
	`amp&amp;quot"'`,
	"]]><!-- -->",
	"**bold** _it_ [link](http://evil.example)",
	"\u202eRTL override",
	strings.Repeat("long.", 60),
	"%%{init: {'theme':'dark'}}%%",
	"title :crit, 0, 1",
	"../../etc/passwd",
}

func hostileRun() simRun {
	suites := []record.MetaSuite{
		{Label: "x<b>|`y`", LogFile: "x.log", Mode: "list"},
		{Label: "click", LogFile: "click.log", Mode: "opaque"},
	}
	var items []simItem
	for i, tag := range hostileTags {
		it := simItem{Label: suites[0].Label, Tag: tag, Est: float64(20 + 7*i), Known: i%5 != 4, Actual: float64(25 + 5*i)}
		if i%4 == 1 {
			it.RC = 1
		}
		items = append(items, it)
	}
	items = append(items, simItem{Label: "click", Est: 60, Known: true, Actual: 64})
	order(items)
	old := weights.New()
	old.Set(record.ItemID{Label: suites[0].Label, Tag: hostileTags[0]}.Key(), 10)
	return simRun{
		Suites: suites, Cmds: map[string]string{suites[0].Label: "ci/x.sh", "click": "ci/click.sh"},
		GPUs: []string{"0", "1<i>"}, Items: items, Started: t0, Old: old,
		Pruned: []string{"x<b>|`y`/<img src=x onerror=alert(1)>"},
		Quarantined: []record.Quarantined{{GPU: "1<i>", At: t0.Add(30 * time.Second),
			Reason: "<img src=x onerror=alert(1)> | reason\nwith a line break"}},
	}
}

// bigRun is a synthetic 2,000-item run on 8 GPUs: six suites, heavy-tailed durations,
// estimates within ±15 %, some unknown and some failed items.
func bigRun(n int, tagLen int) simRun {
	rng := rand.New(rand.NewPCG(20, 0))
	labels := []string{"torch", "jax", "core", "examples", "onnx", "triton"}
	var suites []record.MetaSuite
	cmds := map[string]string{}
	for _, l := range labels {
		suites = append(suites, record.MetaSuite{Label: l, LogFile: l + ".log", Mode: "list"})
		cmds[l] = "ci/" + l + ".sh"
	}
	var items []simItem
	for i := 0; i < n; i++ {
		l := labels[min(len(labels)-1, int(math.Abs(rng.NormFloat64())*2))]
		tag := fmt.Sprintf("test_%04d.%s", i, []string{"ck", "triton", "auto", "flash"}[i%4])
		if tagLen > len(tag) {
			tag += "." + strings.Repeat("x", tagLen-len(tag)-1)
		}
		actual := round3(min(1500, 20*math.Exp(1.1*rng.NormFloat64())))
		it := simItem{Label: l, Tag: tag, Est: round3(actual * math.Exp(0.15*rng.NormFloat64())), Known: i%80 != 7, Actual: actual}
		if i%167 == 3 {
			it.RC = 1
		}
		items = append(items, it)
	}
	order(items)
	old := weights.New()
	for _, it := range items {
		if it.Known {
			old.Set(it.key(), it.Est)
		}
	}
	var pruned []string
	for i := 0; i < 40; i++ {
		pruned = append(pruned, fmt.Sprintf("torch/test_gone_%02d.ck", i))
	}
	return simRun{Suites: suites, Cmds: cmds, GPUs: []string{"0", "1", "2", "3", "4", "5", "6", "7"}, Items: items, Started: t0, Old: old, Pruned: pruned}
}

func TestGenerateFixtures(t *testing.T) {
	if !*gen {
		t.Skip("run with -gen to regenerate testdata/runs")
	}
	table := loadTE(t)
	for name, sr := range fixtures(t, table) {
		if err := sr.write(filepath.Join("testdata", "runs", name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFixturesAreGenerated checks the committed fixtures are what the generator
// writes, so a change to either is seen.
func TestFixturesAreGenerated(t *testing.T) {
	table := loadTE(t)
	for name, sr := range fixtures(t, table) {
		dir := t.TempDir()
		if err := sr.write(dir); err != nil {
			t.Fatal(err)
		}
		files := []string{"queue/queue.tsv", "queue/timings.tsv", "queue/attempts.tsv", "queue/run.json"}
		for label := range sr.JUnit {
			files = append(files, "junit/"+label+".xml")
		}
		for rel := range sr.Files {
			files = append(files, rel)
		}
		for _, f := range files {
			want, err := os.ReadFile(filepath.Join("testdata", "runs", name, f))
			if err != nil && !(sr.Legacy && f == "queue/attempts.tsv") {
				t.Fatalf("%v (run the tests once with -gen)", err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, f))
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from what the generator writes: rerun with -gen", name, f)
			}
		}
	}
}
