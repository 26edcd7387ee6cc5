package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/mdcut"
	"github.com/rocm/sgpu-queue/internal/record"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")
	outDir = flag.String("out", "", "also write the rendered reports (2,000-item run included) to this directory, to look at")
)

// goldenRuns are the committed fixture runs (testdata/runs/<name>).
var goldenRuns = []string{"te80", "te80-failures", "te80-legacy", "te80-cancelled", "hostile", "te-mixed"}

func loadRun(t *testing.T, dir string) (*record.Run, []verdict.Suite, Stats) {
	t.Helper()
	r, warns, err := logdir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Fatalf("%s: %v", dir, warns)
	}
	suites := verdict.Decide(r)
	return r, suites, Compute(r, suites)
}

func renderBoth(t *testing.T, r *record.Run, suites []verdict.Suite, s Stats) (md, svg []byte) {
	t.Helper()
	var sb bytes.Buffer
	if err := SVG(&sb, r, suites, s); err != nil {
		t.Fatal(err)
	}
	return []byte(Render(r, suites, s, Options{})), sb.Bytes()
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got, *update)
}

func keep(t *testing.T, name string, data []byte) {
	if *outDir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(*outDir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGolden(t *testing.T) {
	for _, name := range goldenRuns {
		t.Run(name, func(t *testing.T) {
			r, suites, s := loadRun(t, filepath.Join("testdata", "runs", name))
			md, svg := renderBoth(t, r, suites, s)
			checkMarkdown(t, md)
			checkSVG(t, svg)
			goldenFile(t, name+".md", md)
			goldenFile(t, name+".svg", svg)
			keep(t, name+".md", md)
			keep(t, name+".svg", svg)
		})
	}
}

// The report says what each fixture is about, in its headline and sections.
func TestFixtureContent(t *testing.T) {
	tests := []struct {
		run  string
		want []string
		not  []string
	}{
		{"te80", []string{"## ✓ sgpu-queue: all 80 items passed", "| quality: wall ÷ hindsight LPT |", "### Weights learned: 79 changed, 2 pruned", "`jax/test_sharding_old.auto`", "**Worst 10 misses**"},
			[]string{"[!WARNING]", "### Failed items"}},
		{"te80-failures", []string{"## ✗ sgpu-queue: 8 of 9 tests failed; 5 of 83 items failed", "### Failed items (5)",
			"[`items/jax.test_layer.auto.log`](../items/jax.test_layer.auto.log)", "| 139 | cut off |",
			// 124 by itself is a failure; only the item killed at its deadline timed out.
			"| `jax/test_layer.auto` | 124 |  | 382s |", "| `torch/test_gemm_autotune.ck` | 124 | timed out | 111s |",
			"### Timed-out items (1)", "item-timeout-factor 3",
			"**1 item(s) ran nothing** (no-run", "`torch/test_gemm.gated`", "no\\-run\\: its re\\-entry ran nothing",
			// The no-run item taught nothing; the timed-out one only raised its weight.
			"| `torch/test_gemm_autotune.ck` | 37s | 111s |",
			"### Items without an estimate (3)", "`torch/test_fp8_blockwise.ck` | 455s", "| `torch/test_fp8_blockwise.ck` | new | 455s |"},
			[]string{"[!WARNING]", "| `torch/test_gemm.gated` | new"}},
		{"te80-legacy", []string{"## ✗ sgpu-queue: 3 of 82 items failed", "| `jax/test_layer.auto` | 124 | cut off |", "| 139 | cut off |"},
			[]string{"### Timed-out items", "timed out", "no-run"}},
		{"te80-cancelled", []string{"## ✗ sgpu-queue: cancelled, 14 of 80 items finished", "**The run was cancelled**",
			"**66 queued item(s) produced no timing row**", "and 56 more", "### Items that never finished (66)", "cancelled before it started"},
			[]string{"| split the largest item? |"}},
		{"hostile", []string{"&lt;img src\\=x", "`` x<b>\\|`y` ``", "x_b___y_/_script_alert__x___/script_"},
			[]string{"<script", "<img", "\x1b", "\u202e"}},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			r, suites, s := loadRun(t, filepath.Join("testdata", "runs", tt.run))
			md, _ := renderBoth(t, r, suites, s)
			for _, w := range tt.want {
				if !bytes.Contains(md, []byte(w)) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, n := range tt.not {
				if bytes.Contains(stripCode(string(md)), []byte(n)) {
					t.Errorf("report has %q outside code", n)
				}
			}
		})
	}
}

// TestBigRun renders a 2,000-item run on 8 GPUs: the Gantt stays within Mermaid's
// limits, the report within 1 MiB, the SVG well-formed with every failure drawn.
func TestBigRun(t *testing.T) {
	dir := t.TempDir()
	if err := bigRun(2000, 0).write(dir); err != nil {
		t.Fatal(err)
	}
	r, suites, s := loadRun(t, dir)
	if s.Items != 2000 || s.GPUs != 8 {
		t.Fatalf("items %d gpus %d", s.Items, s.GPUs)
	}
	md, svg := renderBoth(t, r, suites, s)
	checkMarkdown(t, md)
	checkSVG(t, svg)
	keep(t, "big2000.md", md)
	keep(t, "big2000.svg", svg)
	gantt := mermaidBlock(string(md))
	bars := strings.Count(gantt, " :")
	if bars > mermaidBudget || len(gantt) > 50000 {
		t.Errorf("Gantt has %d bars, %d bytes: over the budget", bars, len(gantt))
	}
	if !strings.Contains(string(md), "were merged into") {
		t.Error("the report does not say items were merged in the Gantt")
	}
	if bytes.Contains(md, []byte("left out")) {
		t.Error("a 2,000-item run should fit without cutting rows")
	}
	// Every failure is drawn in the SVG (hatched), even when tiny.
	failedRows := 0
	for _, tm := range r.Attempts {
		if tm.RC != 0 {
			failedRows++
		}
	}
	if got := bytes.Count(svg, []byte(`fill="url(#fail)" stroke=`)); got < 1 || failedRows == 0 {
		t.Errorf("%d failed rows, %d hatched bars", failedRows, got)
	}
	// Short items of several suites share a grey bar, which the legend names.
	if !bytes.Contains(svg, []byte(`fill="`+mixedColour+`"/><text x="18" y="10">short items of several suites, merged</text>`)) {
		t.Error("the SVG's legend does not name the grey bars of merged items of several suites")
	}
}

// TestSizeCap: a run whose tables cannot fit is cut from its longest tables, with a
// note, and never loses its headline.
func TestSizeCap(t *testing.T) {
	dir := t.TempDir()
	if err := bigRun(6000, 200).write(dir); err != nil {
		t.Fatal(err)
	}
	r, suites, s := loadRun(t, dir)
	tests := []struct {
		name  string
		limit int
	}{
		{"1 MiB", MaxBytes},
		{"64 KiB", 64 << 10},
		{"headline only", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := render(r, suites, s, tt.limit, Options{})
			if !strings.HasPrefix(md, "## ✗ sgpu-queue: 36 of 6000 items failed at level 3\n") {
				t.Errorf("headline lost: %.80q", md)
			}
			for _, w := range []string{"### Efficiency", "```mermaid", "### Failed items (36)"} {
				if !strings.Contains(md, w) {
					t.Errorf("lacks %q", w)
				}
			}
			if !strings.Contains(md, "left out to keep this report under 1 MiB") {
				t.Error("no note says rows were left out")
			}
			if tt.limit == MaxBytes && len(md) > MaxBytes {
				t.Errorf("%d bytes, over %d", len(md), MaxBytes)
			}
			checkMarkdown(t, []byte(md))
		})
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"queue.tsv", "timings.tsv", "attempts.tsv", "run.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "runs", "te80-failures", "queue", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "queue"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "queue", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, suites, s := loadRun(t, dir)
	files, err := WriteFiles(logdir.Layout{Root: dir}, r, suites, s)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report", "schedule.md"))
	svg, _ := os.ReadFile(filepath.Join(dir, "report", "timeline.svg"))
	want, wantSVG := renderBoth(t, r, suites, s)
	if files.Markdown != string(md) || !bytes.Equal(md, want) || !bytes.Equal(svg, wantSVG) {
		t.Error("the files differ from Markdown/SVG output")
	}
	if files.MDPath != filepath.Join(dir, "report", "schedule.md") || files.SVGPath != filepath.Join(dir, "report", "timeline.svg") {
		t.Errorf("paths %q %q", files.MDPath, files.SVGPath)
	}
	// The report dir cannot be created: an error naming the path, the Markdown kept.
	bad := &record.Run{Dir: filepath.Join(dir, "queue", "run.json"), Meta: r.Meta}
	files, err = WriteFiles(logdir.Layout{Root: bad.Dir}, bad, suites, s)
	if err == nil || !strings.Contains(err.Error(), "run.json") || files.Markdown == "" {
		t.Errorf("err %v, markdown %d bytes", err, len(files.Markdown))
	}
}

// checkMarkdown checks what a hostile tag could break: every table row has its
// header's cells and no row spills onto a line of its own; no HTML outside code but
// the report's own tags; no control characters; Mermaid lines of the expected forms.
func checkMarkdown(t *testing.T, md []byte) {
	t.Helper()
	if len(md) > MaxBytes {
		t.Errorf("%d bytes: over the limit", len(md))
	}
	if i := bytes.IndexFunc(md, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f || r == '\u202e' }); i >= 0 {
		t.Errorf("control character at byte %d: %q", i, md[max(0, i-20):min(len(md), i+20)])
	}
	lines := strings.Split(string(md), "\n")
	inFence, inMermaid, fenceLen := false, false, 0
	mermaidLine := regexp.MustCompile(`^(---|displayMode: compact|gantt|    title [0-9]+ items on [0-9]+ GPUs, wall [0-9a-z.]+|    dateFormat X|    axisFormat %H:%M(:%S)?|    todayMarker off|    section GPU [A-Za-z0-9._+=/-]+(꞉[A-Za-z0-9._+=/-]+)*|    [A-Za-z0-9._+=/-]+( on [0-9]+ GPUs)?( [0-9]+ failed)? :(crit, )?[0-9]+, [0-9]+|    [0-9]+ items( [0-9]+ failed)? :(crit, )?[0-9]+, [0-9]+)$`)
	pipes := -1
	for n, line := range lines {
		if n := len(line) - len(strings.TrimLeft(line, "`")); n >= 3 && (!inFence || n >= fenceLen && strings.Trim(line, "`") == "") {
			inFence = !inFence
			inMermaid = inFence && line == "```mermaid"
			fenceLen = n
			continue
		}
		if inFence {
			if inMermaid && !mermaidLine.MatchString(line) {
				t.Errorf("line %d: unexpected Mermaid line %q", n+1, line)
			}
			continue
		}
		if strings.HasPrefix(line, "|") {
			c := cellPipes(line)
			if pipes < 0 {
				pipes = c
				if n+1 >= len(lines) || !strings.HasPrefix(lines[n+1], "|---") {
					t.Errorf("line %d: table without a delimiter row: %q", n+1, line)
				}
			} else if c != pipes {
				t.Errorf("line %d: %d cells, the header has %d: %q", n+1, c-1, pipes-1, line)
			}
			continue
		}
		if pipes >= 0 && line != "" {
			t.Errorf("line %d: text right after a table row (a row spilled?): %q", n+1, line)
		}
		pipes = -1
		if bad := html.Find(stripCode(line)); bad != nil {
			t.Errorf("line %d: HTML %q outside code: %q", n+1, bad, line)
		}
	}
}

// html finds what could open a tag, once code and the report's own tags are gone.
var html = regexp.MustCompile(`<[^ ]`)

// cellPipes counts the pipes that delimit cells. GFM (cmark-gfm's table scanner,
// longest match) never splits at a pipe right after a backslash, even in code and
// even after another backslash.
func cellPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

// stripCode removes code spans (CommonMark: a run of n backticks up to the next run
// of exactly n) and the report's own tags, leaving what a renderer would read as
// text or HTML.
func stripCode(s string) []byte {
	out := []byte(mdcut.StripCodeSpans(s))
	for _, tag := range []string{"<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>", "<code>", "</code>"} {
		out = bytes.ReplaceAll(out, []byte(tag), nil)
	}
	return out
}

func mermaidBlock(md string) string {
	i := strings.Index(md, "```mermaid\n")
	if i < 0 {
		return ""
	}
	j := strings.Index(md[i+3:], "```")
	return md[i : i+3+j]
}

// checkSVG decodes the SVG as strict XML and checks it carries no control bytes.
func checkSVG(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = true
	depth, elems := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 && tok.Name.Local != "svg" {
				t.Fatalf("root element %q", tok.Name.Local)
			}
			depth++
			elems++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || elems < 10 {
		t.Errorf("depth %d after the end, %d elements", depth, elems)
	}
	if i := bytes.IndexFunc(svg, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f || r == '\u202e' }); i >= 0 {
		t.Errorf("control character at byte %d", i)
	}
}

// The bad-day policies show: the stall, the quarantined GPU, flaky and timed-out items.
func TestBadDaySections(t *testing.T) {
	started := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := &record.Run{
		Meta: record.Meta{
			Suites: []record.MetaSuite{{Label: "torch", LogFile: "torch.log", Mode: "list"}},
			GPUs:   []string{"0", "1"}, Started: started, Finished: true, Wall: 30, BadDay: record.BadDay{TimeoutFactor: 3},
			Quarantined: []record.Quarantined{{GPU: "1", Reason: "2 items failed in a row on it (rc=1 after 0.1s with \"hipErrorNoDevice\")", At: started.Add(5 * time.Second)}},
			Stop:        &record.Stop{Reason: outcome.StopQuarantined, Message: "every GPU is quarantined (gpu1) with 3 item(s) left to run: check the runner's GPUs", Phase: 4},
		},
		Queue: []record.QueueRow{{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}}, {ItemID: record.ItemID{Label: "torch", Tag: "hang|pipe"}}, {ItemID: record.ItemID{Label: "torch", Tag: "own124"}}},
		Attempts: []record.Attempt{
			{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}, GPUs: []string{"1"}, Secs: 0.1, RC: 1, EndOff: 0.1, Outcome: outcome.Failed},
			{ItemID: record.ItemID{Label: "torch", Tag: "hang|pipe"}, GPUs: []string{"0"}, Secs: 12, RC: 124, EndOff: 12, Outcome: outcome.Timeout},
			// Exited 124 by itself: a failure, not a timeout.
			{ItemID: record.ItemID{Label: "torch", Tag: "own124"}, GPUs: []string{"1"}, Secs: 3, RC: 124, EndOff: 3, Outcome: outcome.Failed},
			{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}, GPUs: []string{"0"}, Secs: 2, RC: 0, StartOff: 12, EndOff: 14, Outcome: outcome.OK},
		},
	}
	// gpu1 is quarantined, so the flaky item's first failure was the GPU's fault.
	suites := verdict.Decide(r)
	md := Render(r, suites, Compute(r, suites), Options{})
	for _, want := range []string{
		"**The run stopped early**: every GPU is quarantined",
		"**1 GPU(s) quarantined** (1)",
		"### Quarantined GPUs (1)", "| 1 | t+0:05 |",
		"### Timed-out items (1)", "`torch/hang\\|pipe`", "3 × the learned weight",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	_, timedOut, _ := strings.Cut(md, "### Timed-out items")
	timedOut, _, _ = strings.Cut(timedOut, "\n### ")
	if strings.Contains(timedOut, "own124") {
		t.Errorf("an item that exited 124 by itself is listed as timed out:\n%s", timedOut)
	}
	if strings.Contains(md, "### Flaky items") {
		t.Error("a failure on a quarantined GPU was reported as flaky")
	}
	// On a healthy GPU the same history is flakiness.
	r.Meta.Quarantined, r.Meta.Stop = nil, nil
	r.Attempts[0].GPUs = []string{"0"}
	suites = verdict.Decide(r)
	md = Render(r, suites, Compute(r, suites), Options{})
	if !strings.Contains(md, "### Flaky items (1)") || !strings.Contains(md, "| `torch/flaky` | 2 | ") {
		t.Errorf("no flaky section:\n%s", md)
	}
}

// The flaky section names the earlier attempts' logs as the run keeps them
// (items/<label>.<safetag>@attempt<n>.log, docs/files.md), and only those on disk.
func TestFlakyAttemptLogs(t *testing.T) {
	dir := t.TempDir()
	r := &record.Run{
		Dir: dir,
		Meta: record.Meta{
			Suites: []record.MetaSuite{{Label: "torch", LogFile: "torch.log", Mode: "list"}},
			GPUs:   []string{"0", "1"}, Finished: true, Wall: 30,
		},
		Queue: []record.QueueRow{{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}}, {ItemID: record.ItemID{Label: "torch", Tag: "odd tag"}}},
		Attempts: []record.Attempt{
			{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}, GPUs: []string{"1"}, Secs: 0.1, RC: 1, EndOff: 0.1, Outcome: outcome.Failed},
			{ItemID: record.ItemID{Label: "torch", Tag: "odd tag"}, GPUs: []string{"0"}, Secs: 0.1, RC: 1, EndOff: 0.1, Outcome: outcome.Failed},
			{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}, GPUs: []string{"0"}, Secs: 0.1, RC: 1, StartOff: 1, EndOff: 1.1, Outcome: outcome.Failed},
			{ItemID: record.ItemID{Label: "torch", Tag: "odd tag"}, GPUs: []string{"1"}, Secs: 2, RC: 0, StartOff: 1, EndOff: 3, Outcome: outcome.OK},
			{ItemID: record.ItemID{Label: "torch", Tag: "flaky"}, GPUs: []string{"1"}, Secs: 2, RC: 0, StartOff: 2, EndOff: 4, Outcome: outcome.OK},
		},
	}
	l := logdir.Layout{Root: r.Dir}
	// Attempt 2 of "flaky" lost its log (a full disk when it was moved aside).
	for _, p := range []string{l.ItemAttemptLog("torch", "flaky", 1), l.ItemAttemptLog("torch", "odd tag", 1)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("failed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	suites := verdict.Decide(r)
	md := Render(r, suites, Compute(r, suites), Options{})
	odd := logdir.ItemFileName("torch", "odd tag", 1, false)
	for _, want := range []string{
		"as `<label>.<safetag>@attempt<N>.log`",
		"| `torch/flaky` | 3 | flaky\\: passed on attempt 3 | [`items/torch.flaky.log`](../items/torch.flaky.log) | [`items/torch.flaky@attempt1.log`](../items/torch.flaky@attempt1.log) |",
		"| [`items/" + odd + "`](../items/" + odd + ") |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"attempt2.log", ".attempt1"} {
		if strings.Contains(md, bad) {
			t.Errorf("report names %q, which is not on disk", bad)
		}
	}
	// For github.com the names are plain, as every log there.
	md = Render(r, suites, Compute(r, suites), Options{RunURL: "https://github.com/o/r/actions/runs/1"})
	if !strings.Contains(md, "| `items/torch.flaky@attempt1.log` |") {
		t.Errorf("report for github.com lacks the plain attempt log name")
	}
}

// A re-run's note counts what ran: the failed items again, and the items no earlier run
// of the key ran, whole (docs/reruns.md#a-re-run).
func TestRerunNote(t *testing.T) {
	for _, tc := range []struct {
		rr   record.Rerun
		want string
	}{
		{record.Rerun{Failed: 3, Ran: 2, Narrowed: 1}, "2 of the 3 item(s) that failed the last attempt ran again (1 narrowed to their failed tests); the rest"},
		{record.Rerun{Failed: 1, Ran: 1, Unrun: 4}, "1 of the 1 item(s) that failed the last attempt ran again (0 narrowed to their failed tests), " +
			"and whole the 4 item(s) no earlier run of this key had run; the rest"},
	} {
		rr := tc.rr
		if got := rerunNote(&record.Run{Meta: record.Meta{Rerun: &rr}}); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: note %q, want %q", tc.rr, got, tc.want)
		}
	}
	if got := rerunNote(&record.Run{}); got != "" {
		t.Errorf("a full run's note %q", got)
	}
}
