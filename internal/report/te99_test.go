package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/publish"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/simulate"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// The te99 runs are TE's tree as the pull request sees it (docs/report.md, "A
// pull request's report"): TE's 80 single-GPU items with their measured weights and
// 19 of its mGPU queue's 21 (the two test_sanity_import smoke items left out, to
// make the 99 items of the issue that measured today's summary), on 8 GPUs, every
// item writing the JUnit TE's scripts write (pytest's xunit2 for PyTorch with the
// .failed sidecar of TE's plugin, xunit1 with file and line for JAX, CTest's for
// core), and an item log. Everything is drawn from fixed seeds.
//
//	te99        green
//	te99-one    one failed test
//	te99-red    96 failed tests in 12 items, one item timed out in a test (its
//	            .partial names it), one flaky item (a test failed, then passed)

const teMGPU = "../../testdata/simulate/te-mgpu-l3.weights"

// te99Fail says how many tests of an item fail, and how.
type te99Fail struct {
	failed  int  // failed test cases
	errored bool // they are <error>s, with no location anywhere (the item is all)
}

// te99Runs are the three runs, by fixture name.
func te99Runs(t *testing.T, table *weights.Table) map[string]simRun {
	return map[string]simRun{
		"te99":     te99Run(t, table, nil, ""),
		"te99-one": te99Run(t, table, map[string]te99Fail{"torch/test_numerics.ck": {failed: 1}}, ""),
		"te99-red": te99Run(t, table, map[string]te99Fail{
			"torch/test_numerics.ck": {failed: 8}, "torch/test_numerics.ck.amax": {failed: 8},
			"torch/test_numerics.flash": {failed: 8}, "torch/test_numerics.unfused": {failed: 8},
			"torch/test_numerics.aotriton": {failed: 8}, "torch/test_numerics.ck.triton": {failed: 8},
			"jax/test_fused_attn.auto": {failed: 20}, "torch-mgpu/distributed.test_numerics.ck": {failed: 12},
			"torch/test_sanity.ck": {failed: 9}, "core": {failed: 4}, "jax/test_layer.auto": {failed: 2, errored: true},
		}, "torch/test_fused_rope.ck"),
	}
}

// te99Items are the 99 items in the default queue's order (widest first, then
// longest), their durations off their weights by a seeded lognormal factor.
func te99Items(t *testing.T, table *weights.Table) ([]simItem, *weights.Table) {
	f, err := os.Open(teMGPU)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mgpu, warns, err := simulate.Load(f, teMGPU)
	if err != nil || len(warns) > 0 {
		t.Fatalf("%s: %v %v", teMGPU, err, warns)
	}
	var all []schedule.Item
	for _, k := range table.Keys() {
		w, _ := table.Get(k)
		id := record.ParseItemID(k)
		label, tag := id.Label, id.Tag
		all = append(all, schedule.Item{ItemID: record.ItemID{Label: label, Tag: tag}, Weight: w, Known: true, GPUs: 1})
	}
	for _, it := range mgpu.Items {
		if !strings.HasPrefix(it.Tag, "test_sanity_import") {
			all = append(all, it)
		}
	}
	rng := rand.New(rand.NewPCG(99, 30))
	old := weights.New()
	var items []simItem
	for _, i := range schedule.BlockOrder(all, schedule.ByWidest) {
		it := all[i]
		old.Set(it.Key(), it.Weight)
		items = append(items, simItem{Label: it.Label, Tag: it.Tag, Est: it.Weight, Known: true, GPUs: it.GPUs,
			Actual: round3(it.Weight * math.Exp(0.08*rng.NormFloat64()))})
	}
	if len(items) != 99 {
		t.Fatalf("%d items, want 99", len(items))
	}
	return items, old
}

var te99Suites = []record.MetaSuite{
	{Label: "examples", LogFile: "examples.log", Mode: "opaque"},
	{Label: "torch", LogFile: "torch.log", Mode: "list"},
	{Label: "jax", LogFile: "jax.log", Mode: "list"},
	{Label: "core", LogFile: "core.log", Mode: "opaque"},
	{Label: "torch-mgpu", LogFile: "torch_mgpu.log", Mode: "list"},
	{Label: "jax-mgpu", LogFile: "jax_mgpu.log", Mode: "list"},
}

// te99Run is the run where the items of fail fail so, crashing the timed-out item
// in its third test when more than one fails, and flaky (a key, or "") failing its first
// attempt.
func te99Run(t *testing.T, table *weights.Table, fail map[string]te99Fail, flaky string) simRun {
	items, old := te99Items(t, table)
	cmds := map[string]string{"torch-mgpu": "ci/pytorch.sh", "jax-mgpu": "ci/jax.sh"}
	for k, v := range teCmds {
		cmds[k] = v
	}
	sr := simRun{Suites: te99Suites, Cmds: cmds, GPUs: []string{"0", "1", "2", "3", "4", "5", "6", "7"}, Items: items, Started: t0, Old: old,
		TimeoutFactor: 3, JUnit: map[string]map[string]string{}, Sidecars: map[string]map[string]string{}, Files: map[string]string{}}
	hung := ""
	if len(fail) > 1 {
		hung = "torch/test_gemm_autotune.ck"
	}
	for i := range sr.Items {
		it := &sr.Items[i]
		k := it.key()
		f, failing := fail[k]
		switch {
		case k == hung:
			it.Actual, it.RC, it.Outcome = round3(3*it.Est), 124, outcome.Timeout
		case failing:
			it.RC = 1
		}
		if k == flaky {
			it.Retried = true
		}
		cases := te99Cases(*it)
		file := it.Tag
		if file == "" {
			file = "results" // an opaque suite names its own files
		}
		if sr.JUnit[it.Label] == nil {
			sr.JUnit[it.Label], sr.Sidecars[it.Label] = map[string]string{}, map[string]string{}
		}
		base := logdir.ItemBase(it.Label, it.Tag)
		if k == hung {
			// Killed in its third test: no XML, the .partial of TE's plugin.
			sr.Sidecars[it.Label][file+".xml.partial"] = te99Partial(cases, 2)
			sr.Files["items/"+base+".log"] = te99Log(*it, cases, nil, 2)
			continue
		}
		bad := map[int]bool{}
		for n := 0; n < min(f.failed, len(cases)); n++ {
			k := (n*7 + 3) % len(cases)
			for bad[k] {
				k = (k + 1) % len(cases)
			}
			bad[k] = true
		}
		sr.JUnit[it.Label][file] = te99XML(*it, cases, bad, f.errored)
		if ids := te99Failed(cases, bad); ids != "" && it.Label != "core" {
			sr.Sidecars[it.Label][file+".xml.failed"] = ids
		}
		sr.Files["items/"+base+".log"] = te99Log(*it, cases, bad, -1)
		if it.Retried {
			first := map[int]bool{1: true}
			sr.Files["items/"+base+"@attempt1.log"] = te99Log(*it, cases, first, -1)
			sr.Files["items/"+base+"@attempt1.log.rc"] = "1\n"
			sr.Files["items/"+base+"@attempt1.xml"] = te99XML(*it, cases, first, false)
		}
	}
	return sr
}

// te99Case is one test of an item: its pytest node id parts, or CTest's name.
type te99Case struct {
	file, classname, name string
	line                  int
	skipped               bool
}

func (c te99Case) id() string {
	if c.file == "" {
		return c.name
	}
	return c.file + "::" + c.name
}

// te99File is the test file of a TE item: the tag up to its first "test_" part,
// dotted back into a path (TE's tags: distributed.test_numerics.ck →
// tests/pytorch/distributed/test_numerics.py).
func te99File(label, tag string) string {
	root := "tests/pytorch/"
	if strings.HasPrefix(label, "jax") {
		root = "tests/jax/"
	}
	parts := strings.Split(tag, ".")
	for i, p := range parts {
		if strings.HasPrefix(p, "test_") {
			return root + strings.Join(parts[:i+1], "/") + ".py"
		}
	}
	return root + parts[0] + "/test_" + parts[0] + ".py"
}

// te99Backend is what a TE tag says after its test file: "ck.amax+triton".
func te99Backend(tag string) string {
	parts := strings.Split(tag, ".")
	rest := parts[1:]
	for i, p := range parts {
		if strings.HasPrefix(p, "test_") {
			rest = parts[i+1:]
			break
		}
	}
	var keep []string
	for _, p := range rest {
		if p != "" {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return "default"
	}
	return strings.Join(keep, ".")
}

var te99Names = []string{"test_linear", "test_layernorm", "test_gemm", "test_gelu", "test_mha", "test_softmax", "test_cast", "test_rope"}
var te99Dtypes = []string{"fp32", "bf16", "fp16", "fp8"}

// te99Cases are an item's tests: one per 10 s of its weight (2 to 60), every
// eleventh skipped.
func te99Cases(it simItem) []te99Case {
	n := min(60, max(2, int(math.Round(it.Est/10))))
	cases := make([]te99Case, n)
	for k := range cases {
		c := te99Case{skipped: k%11 == 10, line: 100 + 7*k}
		switch it.Label {
		case "core":
			c.classname = "transformer_engine_tests"
			op := te99Names[k%8][len("test_"):]
			c.name = fmt.Sprintf("OperatorTest/%s%sTestSuite.Test/%d", strings.ToUpper(op[:1]), op[1:], k)
		case "examples":
			c.file = "examples/pytorch/test_examples.py"
			c.classname = "examples.pytorch.test_examples"
			c.name = fmt.Sprintf("test_example[%s-%d]", te99Dtypes[k%4], k)
		default:
			c.file = te99File(it.Label, it.Tag)
			c.classname = strings.ReplaceAll(strings.TrimSuffix(c.file, ".py"), "/", ".")
			c.name = fmt.Sprintf("%s[%s-%s-%d]", te99Names[k%8], te99Dtypes[(k/8)%4], te99Backend(it.Tag), k)
		}
		cases[k] = c
	}
	return cases
}

// te99XML is the item's JUnit: CTest's for core; xunit1 (file and line) for JAX;
// pytest's default xunit2 (neither) for the rest, as TE writes them.
func te99XML(it simItem, cases []te99Case, bad map[int]bool, errored bool) string {
	var b strings.Builder
	nf := len(bad)
	ne := 0
	if errored {
		nf, ne = 0, len(bad)
	}
	skipped := 0
	for k, c := range cases {
		if c.skipped && !bad[k] {
			skipped++
		}
	}
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites><testsuite name=\"pytest\" errors=\"%d\" failures=\"%d\" "+
		"skipped=\"%d\" tests=\"%d\" time=\"%.3f\">\n", ne, nf, skipped, len(cases), it.Actual)
	xunit1 := strings.HasPrefix(it.Label, "jax")
	for k, c := range cases {
		var name bytes.Buffer
		_ = xml.EscapeText(&name, []byte(c.name))
		attrs := fmt.Sprintf(`classname="%s" name="%s"`, c.classname, name.String())
		if xunit1 && c.file != "" {
			attrs += fmt.Sprintf(` file="%s" line="%d"`, c.file, c.line)
		}
		secs := it.Actual / float64(len(cases))
		switch {
		case bad[k] && errored:
			fmt.Fprintf(&b, "<testcase %s time=\"%.3f\"><error message=\"failed on setup with &quot;RuntimeError: HIP error: "+
				"out of memory&quot;\">RuntimeError: HIP error: out of memory\nCompile with `TORCH_USE_HIP_DSA` to enable device-side "+
				"assertions.</error></testcase>\n", attrs, secs)
		case bad[k] && it.Label == "core":
			fmt.Fprintf(&b, "<testcase %s time=\"%.3f\"><failure message=\"Value of: test::compareResults(output, ref)\">"+
				"tests/cpp/operator/test_cast.cu:%d: Failure\nValue of: test::compareResults(output, ref)\n  Actual: false\n"+
				"Expected: true</failure></testcase>\n", attrs, secs, c.line)
		case bad[k]:
			fmt.Fprintf(&b, "<testcase %s time=\"%.3f\"><failure message=\"AssertionError: Tensor-likes are not close!&#10;&#10;"+
				"Mismatched elements: %d / 4096 (0.%d%%)\">dtype = torch.bfloat16\n\n    def %s(dtype):\n        out = layer(x)\n"+
				"&gt;       torch.testing.assert_close(out, ref)\nE       AssertionError: Tensor-likes are not close!\n\n%s:%d: "+
				"AssertionError</failure></testcase>\n", attrs, secs, k+1, k%10, c.name[:strings.Index(c.name+"[", "[")],
				c.file, c.line)
		case c.skipped:
			fmt.Fprintf(&b, "<testcase %s time=\"0.001\"><skipped type=\"pytest.skip\" message=\"FP8 is not supported on this "+
				"device\"/></testcase>\n", attrs)
		default:
			fmt.Fprintf(&b, "<testcase %s time=\"%.3f\"/>\n", attrs, secs)
		}
	}
	b.WriteString("</testsuite></testsuites>\n")
	return b.String()
}

// te99Failed is the .failed sidecar of TE's plugin: the node ids that failed.
func te99Failed(cases []te99Case, bad map[int]bool) string {
	var ids []string
	for k := range bad {
		ids = append(ids, cases[k].id())
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return strings.Join(ids, "\n") + "\n"
}

// te99Partial is the .partial sidecar of a process killed in test died (0-based):
// every test collected, those before it reported passed, it started.
func te99Partial(cases []te99Case, died int) string {
	var b strings.Builder
	ids := make([]string, len(cases))
	for k, c := range cases {
		ids[k] = fmt.Sprintf("%q", c.id())
	}
	fmt.Fprintf(&b, "{\"e\": \"collected\", \"nodeids\": [%s]}\n", strings.Join(ids, ", "))
	for k := 0; k <= died; k++ {
		fmt.Fprintf(&b, "{\"e\": \"start\", \"nodeid\": %q}\n", cases[k].id())
		if k == died {
			break
		}
		for _, when := range []string{"setup", "call", "teardown"} {
			fmt.Fprintf(&b, "{\"e\": \"report\", \"nodeid\": %q, \"when\": %q, \"outcome\": \"passed\"}\n", cases[k].id(), when)
		}
	}
	return b.String()
}

// te99Log is the item's log: pytest's progress, each failure's section, the
// closing line; a process killed in test died (≥ 0) ends there.
func te99Log(it simItem, cases []te99Case, bad map[int]bool, died int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "+ TEST_LEVEL=3 %s %s\n============================= test session starts ==============================\n"+
		"platform linux -- Python 3.12.3, pytest-8.3.5, pluggy-1.5.0\ncollected %d items\n\n", teCmdOf(it.Label), it.Tag, len(cases))
	for k, c := range cases {
		if died >= 0 && k == died {
			fmt.Fprintf(&b, "%s ", c.id())
			b.WriteString("\nsgpu-queue: killed at its hang deadline (3 × its weight)\n")
			return b.String()
		}
		mark := "PASSED"
		switch {
		case bad[k]:
			mark = "FAILED"
		case c.skipped:
			mark = "SKIPPED"
		}
		fmt.Fprintf(&b, "%s %s\n", c.id(), mark)
	}
	if len(bad) > 0 {
		b.WriteString("\n=================================== FAILURES ===================================\n")
		var ks []int
		for k := range bad {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		for _, k := range ks {
			c := cases[k]
			fmt.Fprintf(&b, "______________________ %s ______________________\n>       torch.testing.assert_close(out, ref)\n"+
				"E       AssertionError: Tensor-likes are not close!\n%s:%d: AssertionError\n", c.name, path.Base(c.file), c.line)
		}
		fmt.Fprintf(&b, "=========================== %d failed, %d passed in %.2fs ===========================\n", len(bad),
			len(cases)-len(bad), it.Actual)
		return b.String()
	}
	fmt.Fprintf(&b, "=========================== %d passed in %.2fs ===========================\n", len(cases), it.Actual)
	return b.String()
}

func teCmdOf(label string) string {
	switch label {
	case "torch-mgpu":
		return "ci/pytorch.sh"
	case "jax-mgpu":
		return "ci/jax.sh"
	}
	return teCmds[label]
}

// te99Retry appends the second attempt of each retried item: the first, as
// simulated, failed; the second runs at the back on the first GPU and passes.
func te99Retry(sr simRun, rows []record.Attempt, wall float64) ([]record.Attempt, float64) {
	for _, it := range sr.Items {
		if !it.Retried {
			continue
		}
		for i := range rows {
			if rows[i].ItemID == it.ID() {
				rows[i].RC, rows[i].Outcome = 1, outcome.Failed
				again := rows[i]
				again.GPUs, again.RC, again.Outcome = []string{"0"}, 0, outcome.OK
				again.StartOff = round3(wall + 0.003)
				again.EndOff = round3(again.StartOff + it.Actual)
				again.Secs = round3(it.Actual)
				rows = append(rows, again)
				wall = round3(again.EndOff + 0.004)
				break
			}
		}
	}
	return rows, wall
}

// te99Base is the run whose record each te99 run compares with, as if it were
// the base branch's last run: the green run had the one failure, which it fixed;
// the others were green.
var te99Base = map[string]string{"te99": "te99-one", "te99-one": "te99", "te99-red": "te99"}

// te99Dir writes the te99 run name into a fresh directory, with the record of its
// te99Base run as the base branch's: generated, not committed (about 0.5 MB
// each), from fixed seeds.
func te99Dir(t *testing.T, name string) string {
	t.Helper()
	runs := te99Runs(t, loadTE(t))
	sr, ok := runs[name]
	if !ok {
		t.Fatalf("no te99 run %q", name)
	}
	base := t.TempDir()
	if err := runs[te99Base[name]].write(base); err != nil {
		t.Fatal(err)
	}
	_, _, s := loadRun(t, base)
	rec := s.Tests.Record("dev", "4f1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d", "4200")
	sr.Base = &rec
	dir := t.TempDir()
	if err := sr.write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// comment is the sticky comment's whole body for a te99 run.
func te99Comment(r *record.Run, suites []verdict.Suite, s Stats) string {
	return publish.CommentBody(publish.Request{Workflow: "TransformerEngine CI", Name: "sgpu-queue (build_and_test, linux-mi355-8)",
		SHA: "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01", DetailsURL: runURL, Comment: Comment(r, suites, s, Options{RunURL: runURL})})
}

// The job summary and the PR comment of TE's tree with 0, 1 and 96 failed tests:
// a green summary is its verdict and counts on one screen, the rest folded; the
// comment is a few KB; the test an item died in is named in both, the flaky test
// listed; against the base branch's record, the fixed test and the new failures.
func TestTE99Golden(t *testing.T) {
	for _, c := range []struct {
		name    string
		lines   int // visible lines of the summary, at most
		want    []string
		comment []string
	}{
		{"te99", 20, []string{"## ✓ sgpu-queue: 1407 tests, none failed; all 99 items passed at level 3\n",
			"**Since `dev`'s last run**, `4f1b2c3`: −1 failed · 1 fixed", "| `torch` | 691 | 658 | 0 | 0 | 33 | 69 | 0 |"},
			[]string{"1 fixed", "**Fixed**: `tests/pytorch/test_numerics.py::test_gelu[fp32-ck-3]` (`torch/test_numerics.ck`)"}},
		{"te99-one", 40, []string{"## ✗ sgpu-queue: 1 of 1407 tests failed; 1 of 99 items failed at level 3\n",
			"| `tests/pytorch/test_numerics.py::test_gelu[fp32-ck-3]` | failed, **new** | `torch/test_numerics.ck` | " +
				"`tests/pytorch/test_numerics.py:121` | AssertionError\\: Tensor\\-likes are not close\\! |"},
			[]string{"test_gelu[fp32-ck-3]"}},
		{"te99-red", 120, []string{"## ✗ sgpu-queue: 96 of 1406 tests failed; 12 of 99 items failed at level 3\n",
			"**3 errored** (1 unfinished)", "**96 new failure(s)**",
			// The test the timed-out item died in, from its .partial.
			"| `tests/pytorch/test_gemm_autotune.py::test_gemm[fp32-ck-2]` | died in it, **new** | `torch/test_gemm_autotune.ck` |",
			"**`tests/pytorch/test_gemm_autotune.py::test_gemm[fp32-ck-2]`** (started and never finished)",
			"### Flaky tests (1)", "`tests.pytorch.test_fused_rope::test_layernorm[fp32-ck-1]` | `torch/test_fused_rope.ck` |",
			"<details><summary>40 more failed tests</summary>", "*and 46 more failed tests:"},
			[]string{"test_gemm[fp32-ck-2]` | died in it", "*and 86 more failed tests: [the job summary](" + runURL + ").*",
				"**1 flaky test(s)**"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, suites, s := loadRun(t, te99Dir(t, c.name))
			md := Render(r, suites, s, Options{RunURL: runURL})
			com := te99Comment(r, suites, s)
			checkMarkdown(t, []byte(md))
			checkMarkdown(t, []byte(Comment(r, suites, s, Options{RunURL: runURL})))
			for _, w := range c.want {
				if !strings.Contains(md, w) {
					t.Errorf("summary lacks %q", w)
				}
			}
			for _, w := range c.comment {
				if !strings.Contains(com, w) {
					t.Errorf("comment lacks %q", w)
				}
			}
			if n := visibleLines(md); n > c.lines {
				t.Errorf("summary: %d visible lines, want at most %d", n, c.lines)
			}
			if len(com) > CommentBytes+1024 {
				t.Errorf("comment: %d bytes", len(com))
			}
			goldenFile(t, c.name+".github.md", []byte(md))
			goldenFile(t, c.name+".comment.md", []byte(com))
		})
	}
}

// TestTE99Figures prints the figures docs/report.md gives for the te99 runs: the
// job summary's bytes and the lines a reader sees with every <details> closed.
func TestTE99Figures(t *testing.T) {
	doc, err := os.ReadFile("../../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"te99", "te99-one", "te99-red"} {
		r, suites, s := loadRun(t, te99Dir(t, name))
		md := Render(r, suites, s, Options{RunURL: runURL})
		c := te99Comment(r, suites, s)
		// docs/report.md's table gives these figures in its "now" columns: a change
		// to the report that moves them must say so there.
		row := regexp.MustCompile("(?m)^\\| [^|]*\\(`" + regexp.QuoteMeta(name) + "`\\) \\|[^|]*\\|([^|]*)\\|[^|]*\\|([^|]*)\\|$").FindSubmatch(doc)
		summary := fmt.Sprintf("%.1f KB, %d ", float64(len(md))/1000, visibleLines(md))
		comment := fmt.Sprintf("%.1f KB", float64(len(c))/1000)
		if row == nil || !strings.Contains(strings.ReplaceAll(string(row[1]), "**", ""), summary) || !strings.Contains(string(row[2]), comment) {
			t.Errorf("docs/report.md's row for %s does not give the job summary as %q... and the comment as %q: update its figures", name, summary, comment)
		}
		t.Logf("%-9s summary %6d bytes (%.1f KB), %4d visible lines (%.1f KB)", name, len(md), float64(len(md))/1000, visibleLines(md),
			float64(visibleBytes(md))/1000)
		t.Logf("%-9s comment %6d bytes (%.1f KB), %4d visible lines (%.1f KB)", name, len(c), float64(len(c))/1000, visibleLines(c),
			float64(visibleBytes(c))/1000)
		keep(t, name+".github.md", []byte(md))
		keep(t, name+".comment.md", []byte(c))
	}
}

// visibleLines counts the non-blank lines of md that a reader sees with every
// <details> closed (a closed one is its <summary> line alone); a <details> inside a
// code fence opens nothing.
func visibleLines(md string) int {
	n, _ := visible(md)
	return n
}

// visibleBytes is the bytes of those lines.
func visibleBytes(md string) int {
	_, b := visible(md)
	return b
}

func visible(md string) (n, bytes int) {
	depth, fence := 0, ""
	for _, l := range strings.Split(md, "\n") {
		if depth == 0 && strings.TrimSpace(l) != "" {
			n++
			bytes += len(l) + 1
		}
		t := strings.TrimLeft(l, " ")
		if run := len(t) - len(strings.TrimLeft(t, "`")); run >= 3 && len(l)-len(t) <= 3 {
			switch {
			case fence == "":
				fence = t[:run]
			case run >= len(fence) && strings.TrimSpace(t[run:]) == "":
				fence = ""
			}
			continue
		}
		if fence == "" {
			depth += strings.Count(l, "<details>") - strings.Count(l, "</details>")
		}
	}
	return n, bytes
}
