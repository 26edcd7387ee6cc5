package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/action"
	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/tmpfstest"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// matrix is the shards fixture after a learning run and a plan of 3 shards of 2
// GPUs made from its census (queue/items.tsv: it holds north/n.gated, which the
// runners' capability probe keeps from running).
type matrix struct {
	dir   string
	env   []string // the shard jobs' environment (trace file, JUnit prefix set per shard)
	plan  *shard.Plan
	table string // the weight table the plan was made from, before any merge
}

func newMatrix(t *testing.T) *matrix {
	t.Helper()
	dir := fixture(t, "e2e")
	m := &matrix{dir: dir}
	if r := sgpu(t, dir, nil, "run", "--gpus", "0,1", "--arch", "gfx942", "ci/shards.conf"); r.code != 0 {
		t.Fatalf("learning run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m.table = readFile(t, filepath.Join(dir, "ci-weights", "test_weights.gfx942.l99.txt"))
	args := []string{"plan", "--shards", "3", "--gpus", "2", "--arch", "gfx942", "--items", "test-results/logs/queue/items.tsv", "ci/shards.conf"}
	r := sgpu(t, dir, nil, args...)
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	// Plans are deterministic (shard's own tests pin it): the same inputs again give
	// the same bytes.
	if again := sgpu(t, dir, nil, args...); again.stdout != r.stdout {
		t.Error("a second plan of the same inputs differs")
	}
	p, err := shard.Read(strings.NewReader(r.stdout), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Planned("north/n.gated") || p.Planned("north/n.new") {
		t.Fatalf("the plan should list the census-only north/n.gated and not north/n.new: %+v", p.Shards)
	}
	m.plan = p
	// Items that appeared after the plan, and a failing one.
	m.env = []string{"SGPU_TRACE=" + filepath.Join(dir, "trace"), "NEW_ITEM=1", "NORTH_FAIL=fail:3"}
	return m
}

// runShard runs shard i/3 with its own log dir, JUnit prefix and JUnit dir.
func (m *matrix) runShard(t *testing.T, i int) result {
	t.Helper()
	env := append(m.env[:len(m.env):len(m.env)], fmt.Sprintf("JUNITXML_PREFIX=raw%d/", i))
	return sgpu(t, m.dir, env, "run", "--gpus", "0,1", "--arch", "gfx942", "--shard", fmt.Sprintf("%d/3", i), "--plan", "plan.json",
		"--log-dir", fmt.Sprintf("shards/s%d/logs", i), "--junit-dir", fmt.Sprintf("shards/s%d/junit", i), "ci/shards.conf")
}

// TestShardsPlanRunMerge is the job matrix on one machine: plan 3 shards from a
// learned table, run each (one after another, 2 GPUs each), merge. Every listed
// item ran exactly once across the shards, the one new since the plan on its hash
// shard; the census-only item is not "never ran"; the failing item fails its suite
// and the merge exits with its code; the merged table is the one a single run of
// all the rows learns; the report rebuilds from the merged log dir alone.
func TestShardsPlanRunMerge(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	fail := m.plan.ShardOf("north/n.flip")
	for i := 1; i <= 3; i++ {
		r := m.runShard(t, i)
		want := 0
		if i == fail {
			want = 3
		}
		if r.code != want {
			t.Fatalf("shard %d: exit %d, want %d\n%s\n%s", i, r.code, want, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("shard %d/3: the weight table is left as it is", i)) {
			t.Errorf("shard %d does not say it learns nothing:\n%s", i, r.stdout)
		}
		if md := readFile(t, filepath.Join(m.dir, fmt.Sprintf("shards/s%d/logs/report/schedule.md", i))); !strings.Contains(md, fmt.Sprintf("**Shard %d of 3** of a job matrix (plan `plan.json`", i)) {
			t.Errorf("shard %d's report does not say it is one shard:\n%s", i, md[:min(len(md), 600)])
		}
	}
	if got := readFile(t, filepath.Join(m.dir, "ci-weights", "test_weights.gfx942.l99.txt")); got != m.table {
		t.Error("a shard changed the weight table: merge would learn its rows twice")
	}

	// Every item ran once, on the shard the plan (or, new, the hash) gives it.
	starts := map[string]int{}
	for _, ev := range readTrace(t, filepath.Join(m.dir, "trace")) {
		if ev.kind == "start" {
			starts[record.ItemID{Label: ev.suite, Tag: ev.tag}.Key()]++
		}
	}
	want := []string{"gamma", "north/n.flip", "north/n.four", "north/n.new", "north/n.odd tag [x]*", "north/n.one", "north/n.three", "north/n.two",
		"south/s.four", "south/s.one", "south/s.three", "south/s.two"}
	if diff := cmp.Diff(want, sortedKeys(starts)); diff != "" {
		t.Errorf("items that ran (-want +got):\n%s", diff)
	}
	for k, n := range starts {
		if n != 1 {
			t.Errorf("%s ran %d times across the shards, want once", k, n)
		}
	}
	newShard := shard.HashShard("north/n.new", 3)
	for i := 1; i <= 3; i++ {
		queue := readFile(t, filepath.Join(m.dir, fmt.Sprintf("shards/s%d/logs/queue/queue.tsv", i)))
		if has := strings.Contains(queue, "\tn.new\t"); has != (i == newShard) {
			t.Errorf("shard %d queued north/n.new: %v; its hash shard is %d", i, has, newShard)
		}
	}

	// The single run of all the rows, computed on the shards' own files: the table
	// the plan was made from, every shard's rows, the census a run lists.
	single := &record.Run{}
	for i := 1; i <= 3; i++ {
		run, _, err := logdir.Load(filepath.Join(m.dir, fmt.Sprintf("shards/s%d/logs", i)))
		if err != nil {
			t.Fatal(err)
		}
		single.Meta = run.Meta
		single.Queue = append(single.Queue, run.Queue...)
		single.Attempts = append(single.Attempts, run.Attempts...)
	}
	expected, _ := weights.Parse(strings.NewReader(m.table), "table")
	engine.LearnRun(expected, verdict.Decide(single), censusOf(t, filepath.Join(m.dir, "shards/s1/logs/queue/items.tsv")))

	// The merge job's environment names another level: the shards' (99) is the
	// one it learns into, the level their rows were measured at.
	r := sgpu(t, m.dir, []string{"TEST_LEVEL=3"}, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit",
		"shards/s1/logs", "shards/s2/logs", "shards/s3/logs")
	if r.code != 3 {
		t.Fatalf("merge: exit %d, want 3 (n.flip's)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "ci-weights", "test_weights.gfx942.l3.txt")); err == nil {
		t.Error("the merge wrote a level-3 table: it learns at the shards' level, 99")
	}
	got, _ := weights.Parse(strings.NewReader(readFile(t, filepath.Join(m.dir, "ci-weights", "test_weights.gfx942.l99.txt"))), "table")
	if diff := cmp.Diff(format(t, expected), format(t, got)); diff != "" {
		t.Errorf("the merged table is not the single run's (-single +merged):\n%s", diff)
	}
	if !strings.Contains(format(t, got), "north/n.new ") {
		t.Error("the merge did not learn the item that appeared after the plan")
	}

	out := filepath.Join(m.dir, "merged")
	north := readFile(t, filepath.Join(out, "suites", "north.log"))
	if !strings.Contains(north, "FAIL rc=3 items/north.n.flip.log") || strings.Count(north, "\n") != 7 || strings.Contains(north, "n.gated") {
		t.Errorf("suites/north.log: want 7 items, n.flip failed with 3, n.gated not at all:\n%s", north)
	}
	if rc := readFile(t, filepath.Join(out, "suites", "north.log.rc")); rc != "3\n" {
		t.Errorf("north.log.rc %q", rc)
	}
	if rc := readFile(t, filepath.Join(out, "suites", "south.log.rc")); rc != "0\n" {
		t.Errorf("south.log.rc %q", rc)
	}
	// TE's nine columns, the shard in the gpu column; every row once.
	timings := lines(readFile(t, filepath.Join(out, "queue", "timings.tsv")))
	if len(timings) != 12 {
		t.Errorf("%d merged rows, want 12", len(timings))
	}
	for _, l := range timings {
		f := strings.Split(l, "\t")
		if _, _, ok := record.SplitShardGPU(f[2]); len(f) != 9 || !ok {
			t.Errorf("merged row %q: want 9 columns, the gpu as s<shard>:<gpu>", l)
		}
	}
	var meta record.Meta
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "queue", "run.json"))), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Merge == nil || meta.Merge.NotListed != 1 || len(meta.GPUs) != 6 || meta.Merge.Advice == "" {
		t.Errorf("merged run.json: %+v; want 6 GPUs, 1 planned item listed by no shard (n.gated), an advice", meta.Merge)
	}
	md := readFile(t, filepath.Join(out, "report", "schedule.md"))
	for _, w := range []string{"### Shards", "| 1 | 2 | `shards/s1/logs` |", "**Imbalance**", "a 4th runner would save", "on 6 GPUs", "section GPU s1꞉0"} {
		if !strings.Contains(md, w) {
			t.Errorf("merged report lacks %q", w)
		}
	}
	if rb := sgpu(t, m.dir, nil, "report", "merged"); rb.code != 0 || rb.stdout != md {
		t.Errorf("report merged: exit %d, and the rebuilt report differs from the merge's", rb.code)
	}
	for _, k := range want {
		id := record.ParseItemID(k)
		label, tag := id.Label, id.Tag
		if tag == "" {
			continue // gamma writes no JUnit
		}
		x := filepath.Join(m.dir, "merged-junit", label+".xml")
		if doc := readFile(t, x); !strings.Contains(doc, fmt.Sprintf(`name="%s"`, html.EscapeString(tag))) || !strings.Contains(doc, `name="sgpu.shard"`) {
			t.Errorf("%s has no test case of %s, or no shard property", x, k)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "items", "north.n.flip.log")); err != nil {
		t.Errorf("the failed item's log is not in the merged log dir: %v", err)
	}
	// Merging the same shards again learns nothing new: the table is byte for
	// byte the first merge's, and the console says why.
	table := readFile(t, filepath.Join(m.dir, "ci-weights", "test_weights.gfx942.l99.txt"))
	if !strings.HasPrefix(table, "# sgpu-queue learned from shard runs: ") {
		t.Errorf("the merged table does not record the shard runs it learned from:\n%s", table)
	}
	again := sgpu(t, m.dir, nil, "merge", "--log-dir", "merged-again", "--junit-dir", "merged-junit-again", "shards/s3/logs", "shards/s1/logs", "shards/s2/logs")
	if again.code != 3 {
		t.Fatalf("merge again: exit %d, want 3\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	if got := readFile(t, filepath.Join(m.dir, "ci-weights", "test_weights.gfx942.l99.txt")); got != table {
		t.Errorf("merging the same shards again changed the table (-first +again):\n%s", cmp.Diff(table, got))
	}
	for i := 1; i <= 3; i++ {
		if w := fmt.Sprintf("shard %d/3: shards/s%d/logs: its rows were learned by an earlier merge: not learned again", i, i); !strings.Contains(again.stdout, w) {
			t.Errorf("the second merge does not say %q:\n%s", w, again.stdout)
		}
	}
	if !strings.Contains(again.stdout, "  0 weight(s) changed, 0 pruned") {
		t.Errorf("the second merge changed weights:\n%s", again.stdout)
	}
	validateJUnit(t, filepath.Join(m.dir, "merged-junit", "north.xml")) // last: it skips without xmllint
}

// TestShardsMergeMissingShard: a shard whose log dir never came (its job died, its
// artifact was not uploaded): the items its plan and the others' listings give it
// fail "never ran", in the verdicts, the report and the JUnit, and the merge fails;
// the census-only item is still not one of them. Merging into a shard's own log dir,
// a shard twice or a whole run's log dir is refused in one line (exit 2).
func TestShardsMergeMissingShard(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	m.env = m.env[:1] // no new item, no failure
	for _, i := range []int{1, 3} {
		if r := m.runShard(t, i); r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stdout)
		}
	}
	var lost []string
	for _, s := range m.plan.Shards {
		if s.Shard == 2 {
			for _, k := range s.Keys {
				if k != "north/n.gated" {
					lost = append(lost, k)
				}
			}
		}
	}
	if len(lost) == 0 {
		t.Fatalf("the plan gives shard 2 nothing to lose: %+v", m.plan.Shards)
	}
	r := sgpu(t, m.dir, nil, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit", "shards/s1/logs", "shards/s3/logs")
	if r.code != 1 {
		t.Fatalf("merge without shard 2: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := filepath.Join(m.dir, "merged")
	verdicts := readFile(t, filepath.Join(out, "suites", "north.log")) + readFile(t, filepath.Join(out, "suites", "south.log")) + readFile(t, filepath.Join(out, "suites", "gamma.log"))
	for _, k := range lost {
		id := record.ParseItemID(k)
		label, tag := id.Label, id.Tag
		line := fmt.Sprintf("FAIL rc=- %s (never ran: shard 2/3 never reported)", logdir.ItemLogRel(label, tag))
		if !strings.Contains(verdicts, line) || !strings.Contains(r.stdout, "never ran: shard 2/3 never reported") {
			t.Errorf("no verdict line %q in\n%s", line, verdicts)
		}
		// The summary names no log for it: it never started, there is none.
		if strings.Contains(r.stdout, logdir.ItemLogRel(label, tag)) {
			t.Errorf("the summary names %s, which does not exist:\n%s", logdir.ItemLogRel(label, tag), r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "(never ran: shard 2/3 never reported)  never started: no log\n"); n != len(lost) {
		t.Errorf("%d summary lines say the item never started, want %d:\n%s", n, len(lost), r.stdout)
	}
	if strings.Count(verdicts, "never ran") != len(lost) || strings.Contains(verdicts, "n.gated") {
		t.Errorf("want exactly %d never-ran items (%v), n.gated not among them:\n%s", len(lost), lost, verdicts)
	}
	md := readFile(t, filepath.Join(out, "report", "schedule.md"))
	if !strings.Contains(md, "shard(s) never reported") || !strings.Contains(md, "**never reported**") {
		t.Errorf("the report does not say shard 2 never reported:\n%s", md)
	}
	junit := ""
	for _, s := range []string{"north", "south", "gamma"} {
		if data, err := os.ReadFile(filepath.Join(m.dir, "merged-junit", s+".xml")); err == nil {
			junit += string(data)
		}
	}
	if n := strings.Count(junit, `type="sgpu-queue.never-ran"`); n != len(lost) {
		t.Errorf("%d never-ran JUnit error cases, want %d", n, len(lost))
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--log-dir", "shards/s1/logs", "shards/s1/logs", "shards/s3/logs"}, "is the log dir of shard 1: merge into another"},
		{[]string{"merge", "--log-dir", "m2", "shards/s1/logs", "./shards/s1/logs"}, "are both shard 1/3: give each shard's log dir once"},
		{[]string{"merge", "--log-dir", "m2", "test-results/logs"}, "is the log dir of a whole run, not of a shard"},
		{[]string{"merge", "--log-dir", "m2", "nowhere"}, "nowhere does not exist: give the log dir of a run"},
		{[]string{"merge", "--log-dir", "m2"}, "no SHARD_LOGDIR given"},
	} {
		r := sgpu(t, m.dir, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || len(lines(r.stderr)) > 1 && !strings.Contains(r.stderr, "Usage:") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(m.dir, "shards/s1/logs/queue/run.json")); err != nil {
		t.Errorf("a refused merge touched shard 1's log dir: %v", err)
	}

	// Shard 2 after all, but its run stopped on an internal error (a worker
	// panicked after one of its items): the merge exits as that run did, 70.
	var tag string
	for _, k := range m.plan.Shards[1].Keys {
		// A plain tag: the hook compares it with the item's TEST_FILTER.
		if tg := record.ParseItemID(k).Tag; tg != "" && !strings.ContainsAny(tg, " []*") && k != "north/n.gated" {
			tag = tg
			break
		}
	}
	if tag == "" {
		t.Fatalf("shard 2 has no list item: %+v", m.plan.Shards[1])
	}
	m.env = append(m.env, "SGPU_TEST_PANIC_FILTER="+tag)
	if r := m.runShard(t, 2); r.code != 70 {
		t.Fatalf("shard 2 with a worker panic: exit %d, want 70\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = sgpu(t, m.dir, nil, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit", "shards/s1/logs", "shards/s2/logs", "shards/s3/logs")
	if r.code != 70 || !strings.Contains(r.stdout, "stopped early (internal-error)") {
		t.Errorf("merge with shard 2 stopped on an internal error: exit %d, want 70\n%s", r.code, r.stdout)
	}
}

// TestShardsMergeQuarantine: a shard quarantines its GPU 1 (every item fails
// there at once with a device error); the merge carries that quarantine into its
// run.json, its summary and its report, and names the GPU "s2:1" in each, as in
// the verdict notes; no place says "gpus2:1" or draws a lane "s2_1".
func TestShardsMergeQuarantine(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	m.env = m.env[:1] // no new item, no failure
	for i := 1; i <= 3; i++ {
		if i == 2 {
			m.env = append(m.env, "BAD_GPU=1")
		}
		if r := m.runShard(t, i); r.code != 0 || (i == 2) != strings.Contains(r.stdout, "warning: gpu1 quarantined:") {
			t.Fatalf("shard %d: exit %d, want 0 (and gpu1 quarantined on shard 2 alone)\n%s", i, r.code, r.stdout)
		}
		m.env = m.env[:1]
	}
	r := sgpu(t, m.dir, nil, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit", "shards/s1/logs", "shards/s2/logs", "shards/s3/logs")
	if r.code != 0 || !strings.Contains(r.stdout, "\n  quarantined s2:1: ") {
		t.Fatalf("merge: exit %d, want 0 and the summary line \"quarantined s2:1: …\"\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := filepath.Join(m.dir, "merged")
	var meta record.Meta
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "queue", "run.json"))), &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.Quarantined) != 1 || meta.Quarantined[0].GPU != "s2:1" || meta.Quarantined[0].Reason == "" {
		t.Errorf("merged run.json quarantined %+v, want s2:1 with its reason", meta.Quarantined)
	}
	verdicts := readFile(t, filepath.Join(out, "suites", "north.log")) + readFile(t, filepath.Join(out, "suites", "south.log"))
	if !strings.Contains(verdicts, "(passed after s2:1 was quarantined)") {
		t.Errorf("no verdict note names s2:1:\n%s", verdicts)
	}
	md := readFile(t, filepath.Join(out, "report", "schedule.md"))
	for _, w := range []string{"**1 GPU(s) quarantined** (s2\\:1)", "### Quarantined GPUs (1)", "section GPU s2꞉1"} {
		if !strings.Contains(md, w) {
			t.Errorf("merged report lacks %q", w)
		}
	}
	// The row's time is when shard 2 quarantined the GPU: any offset, never a
	// figure (a busy machine takes longer to get there).
	if !regexp.MustCompile(`\n\| s2\\:1 \| t\+[0-9][0-9:.]*s? \| `).MatchString(md) {
		t.Errorf("merged report has no quarantine row for s2:1 with its time:\n%s", md)
	}
	for _, bad := range []string{"gpus2", "s2_1"} {
		if strings.Contains(r.stdout+verdicts+md, bad) {
			t.Errorf("a GPU is named %q somewhere", bad)
		}
	}
}

// TestShardsMergeListingFailed: shard 2's host cannot list suite south (its
// listing exits 4). That shard exits 1 as a run does, and its log dir records why;
// the merge takes the other shards' rows, fails south with shard 2's reason, counts
// shard 2's items as never ran (never started: no log named), and exits 1, with
// no refusal of the log dir.
func TestShardsMergeListingFailed(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	m.env = m.env[:1] // no new item, no failure
	for i := 1; i <= 3; i++ {
		env := m.env
		want := 0
		if i == 2 {
			m.env, want = append(env, "SOUTH_LIST_FAIL=1"), 1
		}
		r := m.runShard(t, i)
		m.env = env
		if r.code != want {
			t.Fatalf("shard %d: exit %d, want %d\n%s\n%s", i, r.code, want, r.stdout, r.stderr)
		}
	}
	const why = `suite "south": its queue listing (TE_CI_LIST_ITEMS=1) exited with 4; it must list its items and exit 0; last output: ImportError: no module named south`
	rb := sgpu(t, m.dir, nil, "report", "shards/s2/logs")
	if rb.code != 0 || !strings.Contains(rb.stdout, "## ✗ sgpu-queue: stopped before any item ran") || !strings.Contains(rb.stdout, "**Suite `south` failed before its items ran**") {
		t.Errorf("report of shard 2: exit %d\n%s\n%s", rb.code, rb.stdout, rb.stderr)
	}
	r := sgpu(t, m.dir, nil, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit", "shards/s1/logs", "shards/s2/logs", "shards/s3/logs")
	if r.code != 1 || r.stderr != "" {
		t.Fatalf("merge: exit %d, want 1 and nothing on stderr\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	consoleHas(t, r.stdout, "shard 2/3: shards/s2/logs: 0 items on 2 GPUs", "stopped early (listing-failed)",
		"suite south failed: its listing failed on shard 2/3: ci/shards.conf:4: "+why)
	out := filepath.Join(m.dir, "merged")
	south := readFile(t, filepath.Join(out, "suites", "south.log"))
	if !strings.HasSuffix(south, "FAIL rc=1 (its listing failed on shard 2/3: ci/shards.conf:4: "+why+")\n") || readFile(t, filepath.Join(out, "suites", "south.log.rc")) != "1\n" {
		t.Errorf("suites/south.log does not end with shard 2's reason, or its rc is not 1:\n%s", south)
	}
	lost := 0
	for _, k := range m.plan.Shards[1].Keys {
		if k != "north/n.gated" {
			lost++
		}
	}
	if n := strings.Count(r.stdout, `(never ran: shard 2/3 stopped when suite "south"'s listing failed)  never started: no log`); n != lost {
		t.Errorf("%d summary lines of shard 2's items, want %d:\n%s", n, lost, r.stdout)
	}
	md := readFile(t, filepath.Join(out, "report", "schedule.md"))
	if !strings.Contains(md, "**Suite `south` failed before its items ran**: its listing failed on shard 2/3") {
		t.Errorf("the merged report does not say south failed on shard 2:\n%s", md[:min(len(md), 1500)])
	}
	// The merged JUnit fails the suite in its own case, whether or not shard 2
	// held any of south's items.
	x := readFile(t, filepath.Join(m.dir, "merged-junit", "south.xml"))
	if !strings.Contains(x, `type="sgpu-queue.suite-failed"`) || !strings.Contains(x, "suite south: its listing failed on shard 2/3") {
		t.Errorf("merged-junit/south.xml has no error case for the failed listing:\n%s", x)
	}
	validateJUnit(t, filepath.Join(m.dir, "merged-junit", "south.xml")) // last: it skips without xmllint
}

// TestShardsMergeUnclaimed: shard L's host lists north/n.new, which the hash
// gives another shard whose host does not: no shard runs it. The merge fails it,
// never ran, naming who listed it (verdict, summary, report, JUnit), exits 1, and
// a rebuilt report says the same. A shard run from another config (no suite
// south) is refused in one line naming both log dirs and the difference (exit 2);
// with --allow-mixed it is merged with a warning, and south's items the plan gave
// that shard fail, never ran, instead of vanishing.
func TestShardsMergeUnclaimed(t *testing.T) {
	t.Parallel()
	m := newMatrix(t)
	m.env = m.env[:1] // no new item, no failure
	owner := shard.HashShard("north/n.new", 3)
	lister := 1
	if owner == 1 {
		lister = 2
	}
	for i := 1; i <= 3; i++ {
		env := m.env
		if i == lister {
			m.env = append(env, "NEW_ITEM=1")
		}
		r := m.runShard(t, i)
		m.env = env
		if r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	r := sgpu(t, m.dir, nil, "merge", "--log-dir", "merged", "--junit-dir", "merged-junit", "shards/s1/logs", "shards/s2/logs", "shards/s3/logs")
	note := fmt.Sprintf("never ran: listed by shard %d/3, not by its own shard %d/3", lister, owner)
	if r.code != 1 {
		t.Fatalf("merge: exit %d, want 1 (north/n.new ran nowhere)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	consoleHas(t, r.stdout, fmt.Sprintf("warning: item north/n.new was listed by shard(s) %d but not by its own shard %d/3, so no shard ran it", lister, owner),
		"("+note+")  never started: no log")
	out := filepath.Join(m.dir, "merged")
	north := readFile(t, filepath.Join(out, "suites", "north.log"))
	if !strings.Contains(north, "FAIL rc=- items/north.n.new.log ("+note+")") || readFile(t, filepath.Join(out, "suites", "north.log.rc")) != "1\n" {
		t.Errorf("suites/north.log has no never-ran line for n.new, or its rc is not 1:\n%s", north)
	}
	md := readFile(t, filepath.Join(out, "report", "schedule.md"))
	if !strings.Contains(md, "**1 item(s) listed by a shard and run by none**: `north/n.new`") {
		t.Errorf("the merged report does not name the unclaimed item:\n%s", md)
	}
	if rb := sgpu(t, m.dir, nil, "report", "merged"); rb.code != 0 || rb.stdout != md {
		t.Errorf("report merged: exit %d, and the rebuilt report differs from the merge's", rb.code)
	}
	if x := readFile(t, filepath.Join(m.dir, "merged-junit", "north.xml")); strings.Count(x, `type="sgpu-queue.never-ran"`) != 1 || !strings.Contains(x, note) {
		t.Errorf("merged-junit/north.xml has no never-ran case for n.new:\n%s", x)
	}

	// A shard whose plan holds south items (2, else 3: which shard gets what follows
	// the learned durations) again, from a config without suite south.
	k := 0
	for _, i := range []int{2, 3} {
		for _, key := range m.plan.Shards[i-1].Keys {
			if record.ParseItemID(key).Label == "south" && k == 0 {
				k = i
			}
		}
	}
	if k == 0 {
		t.Skipf("the plan put every south item on shard 1 (%v): no other shard to run without south", m.plan.Shards[0].Keys)
	}
	writeConf(t, m.dir, "ci/nosouth.conf", "north  north.log  list    ci/north.sh\ngamma  gamma.log  opaque  ci/gamma.sh\n")
	env := append(m.env[:len(m.env):len(m.env)], fmt.Sprintf("JUNITXML_PREFIX=raw%db/", k))
	bdir := fmt.Sprintf("shards/s%db/logs", k)
	if r := sgpu(t, m.dir, env, "run", "--gpus", "0,1", "--arch", "gfx942", "--shard", fmt.Sprintf("%d/3", k), "--plan", "plan.json",
		"--log-dir", bdir, "--junit-dir", fmt.Sprintf("shards/s%db/junit", k), "ci/nosouth.conf"); r.code != 0 {
		t.Fatalf("shard %d without south: exit %d\n%s\n%s", k, r.code, r.stdout, r.stderr)
	}
	dirs := []string{"shards/s1/logs", "shards/s2/logs", "shards/s3/logs"}
	dirs[k-1] = bdir
	r = sgpu(t, m.dir, nil, append([]string{"merge", "--log-dir", "mixed"}, dirs...)...)
	diff := "shards/s1/logs and " + bdir + " ran different configs: suite south only in shards/s1/logs"
	if r.code != 2 || len(lines(r.stderr)) != 1 || !strings.Contains(r.stderr, diff) || !strings.Contains(r.stderr, "or give --allow-mixed") {
		t.Errorf("merge of another config's shard: exit %d, want 2 and one line naming both and the difference\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "mixed")); err == nil {
		t.Error("a refused merge wrote its log dir")
	}
	r = sgpu(t, m.dir, nil, append([]string{"merge", "--log-dir", "mixed", "--allow-mixed"}, dirs...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "warning: "+diff) {
		t.Fatalf("merge --allow-mixed: exit %d, want 1 and a warning naming the difference\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	listers := map[int]string{2: "1/3 and 3/3", 3: "1/3 and 2/3"}[k]
	south := readFile(t, filepath.Join(m.dir, "mixed", "suites", "south.log"))
	n := 0
	for _, key := range m.plan.Shards[k-1].Keys {
		if id := record.ParseItemID(key); id.Label == "south" {
			label, tag := id.Label, id.Tag
			n++
			line := fmt.Sprintf("FAIL rc=- %s (never ran: listed by shards %s, not by its own shard %d/3)", logdir.ItemLogRel(label, tag), listers, k)
			if !strings.Contains(south, line) {
				t.Errorf("suites/south.log lacks %q:\n%s", line, south)
			}
		}
	}
	if strings.Count(south, "never ran") != n {
		t.Errorf("%d never-ran lines of south, want %d (the plan gives shard %d %v):\n%s", strings.Count(south, "never ran"), n, k, m.plan.Shards[k-1].Keys, south)
	}
}

// TestShardsPlanPoolAndFullDisk: a plan made for 2 GPUs per shard run on a
// 1-GPU runner says so, naming the plan and the pool, in the shard and in the
// merge. A merge whose weight table cannot be written (a full disk) names it and
// exits 1, though every test passed; one whose log dir fills up exits non-zero
// and never claims "all passed" with exit 0.
func TestShardsPlanPoolAndFullDisk(t *testing.T) {
	t.Parallel()
	full := tmpfstest.Mount(t, 64<<10)
	tmpfstest.Fill(t, full)
	tiny := tmpfstest.Mount(t, 32<<10)
	m := newMatrix(t)
	m.env = m.env[:1] // no new item, no failure
	const pool = "plan plan.json was made for 2 GPUs per shard, but this runner's pool has 1 GPU(s) (0)"
	for i := 1; i <= 3; i++ {
		env := append(m.env[:len(m.env):len(m.env)], fmt.Sprintf("JUNITXML_PREFIX=raw%d/", i))
		gpus := "0,1"
		if i == 1 {
			gpus = "0,"
		}
		r := sgpu(t, m.dir, env, "run", "--gpus", gpus, "--arch", "gfx942", "--shard", fmt.Sprintf("%d/3", i), "--plan", "plan.json",
			"--log-dir", fmt.Sprintf("shards/s%d/logs", i), "--junit-dir", fmt.Sprintf("shards/s%d/junit", i), "ci/shards.conf")
		if r.code != 0 || strings.Contains(r.stdout, "warning: "+pool) != (i == 1) {
			t.Fatalf("shard %d: exit %d, want 0 and the pool warning on shard 1 alone (%q)\n%s\n%s", i, r.code, pool, r.stdout, r.stderr)
		}
	}
	dirs := []string{"shards/s1/logs", "shards/s2/logs", "shards/s3/logs"}
	weightsFile := filepath.Join(full, "weights.txt")
	r := sgpu(t, m.dir, nil, append([]string{"merge", "--log-dir", "merged", "--weights", weightsFile}, dirs...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "the merge's files were not all written: exit code 1") {
		t.Errorf("merge with a table on a full disk: exit %d, want 1 and why\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "NOT written (see the warnings): ") || !strings.Contains(r.stdout, "weights.txt") {
		t.Errorf("the merge does not name the table it could not write:\n%s", r.stdout)
	}
	merged := "warning: plan plan.json was made for 2 GPUs per shard, but shard 1/3's pool (shards/s1/logs) has 1 GPU(s) (0)"
	if !strings.Contains(r.stdout, merged) || strings.Contains(r.stdout, "shard 2/3's pool") {
		t.Errorf("the merge does not warn of shard 1's pool alone (%q):\n%s", merged, r.stdout)
	}
	if rc := readFile(t, filepath.Join(m.dir, "merged", "suites", "north.log.rc")); rc != "0\n" {
		t.Errorf("north.log.rc %q: the verdicts on the good disk are written all the same", rc)
	}

	r = sgpu(t, m.dir, nil, append([]string{"merge", "--log-dir", filepath.Join(tiny, "merged")}, dirs...)...)
	if r.code == 0 {
		t.Errorf("merge into a log dir that fills up: exit 0\n%s\n%s", r.stdout, r.stderr)
	}
	if out := r.stdout + r.stderr; !strings.Contains(out, "NOT written") && !strings.Contains(out, "no space left on device") {
		t.Errorf("the merge does not say what it could not write:\n%s", out)
	}
}

// consoleHas fails the test for each of wants the console output lacks.
func consoleHas(t *testing.T, stdout string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(stdout, w) {
			t.Errorf("the console lacks %q:\n%s", w, stdout)
		}
	}
}

// censusOf reads a run's items.tsv as the census a run prunes by.
func censusOf(t *testing.T, path string) weights.Census {
	t.Helper()
	items, err := shard.ParseItems(strings.NewReader(readFile(t, path)), path)
	if err != nil {
		t.Fatal(err)
	}
	c := weights.Census{}
	for _, k := range items {
		if c[k.Label] == nil {
			c[k.Label] = map[string]bool{}
		}
		c[k.Label][k.Key()] = true
	}
	return c
}

// format is the table as its file holds it (one decimal, largest first), read back
// and written again, so that a table in memory compares with one from a file.
func format(t *testing.T, tb *weights.Table) string {
	t.Helper()
	var b bytes.Buffer
	if err := tb.Format(&b); err != nil {
		t.Fatal(err)
	}
	back, _ := weights.Parse(&b, "table")
	b.Reset()
	if err := back.Format(&b); err != nil {
		t.Fatal(err)
	}
	// The weights only: a merged table also records the shard runs it learned
	// from, in a comment line a single run has no cause to write.
	var out strings.Builder
	for _, l := range lines(b.String()) {
		if !strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

// TestActionModes: the action's three modes through its entry point, as the
// workflow of docs/runners.md runs them, with the local cache server: the
// plan job restores the table and outputs a valid matrix and the plan file; each
// shard job restores the table but saves nothing; the merge job merges the shard
// log dirs by a glob and saves the one learned table under its run-unique key.
func TestActionModes(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	cacheSrv := cachetest.New(t)
	seeded := "sgpu-weights-gfx942-l99-4000-1"
	table := "gamma 0.7\nnorth/n.one 0.4\nnorth/n.two 0.3\nsouth/s.one 0.3\nnorth/n.three 0.2\nnorth/n.four 0.2\nsouth/s.two 0.2\nnorth/n.flip 0.1\nsouth/s.three 0.1\nsouth/s.four 0.1\n"
	cacheSrv.Put(seeded, "", []byte(table))
	step := func(inputs map[string]string, extra ...string) (result, map[string]string) {
		t.Helper()
		env, outFile, _ := runner(t, dir, inputs, append(cacheSrv.Env(), extra...)...)
		r := sgpu(t, dir, env, "action")
		return r, parseOutputs(t, outFile)
	}
	// Weight tables saved: the re-run state each job saves too is not one.
	saves := func() int {
		n := 0
		for _, c := range cacheSrv.CallsTo(cachetest.OpCreate) {
			if !strings.Contains(string(c.Body), "-rerun-") {
				n++
			}
		}
		return n
	}

	// The plan job: no GPU tool anywhere on PATH.
	r, out := step(map[string]string{"mode": "plan", "config": "ci/shards.conf", "arch": "gfx942", "shards": "3", "gpus": "2"})
	if r.code != 0 {
		t.Fatalf("mode plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var matrix map[string][]string
	if err := json.Unmarshal([]byte(out["matrix"]), &matrix); err != nil || strings.Join(matrix["shard"], " ") != "1/3 2/3 3/3" || len(matrix) != 1 {
		t.Fatalf("matrix output %q (%v)", out["matrix"], err)
	}
	if out["plan"] != "plan.json" || out["cache-hit"] != "true" || out["cache-matched-key"] != seeded {
		t.Errorf("plan outputs %v", out)
	}
	p, err := shard.Read(strings.NewReader(readFile(t, filepath.Join(dir, "plan.json"))), "plan.json")
	if err != nil || p.Weights.Keys != 10 || !strings.Contains(p.Weights.Store, seeded) || p.Items != 10 {
		t.Fatalf("plan %+v (%v): want the cached table's 10 keys, named by its cache key", p, err)
	}
	if saves() != 0 {
		t.Error("mode plan saved to the cache")
	}

	for i, s := range matrix["shard"] {
		r, out := step(map[string]string{"mode": "run", "config": "ci/shards.conf", "arch": "gfx942", "gpus": "0,1", "shard": s, "plan": "plan.json",
			"log-dir": fmt.Sprintf("shards/s%d/logs", i+1), "junit-dir": fmt.Sprintf("shards/s%d/junit", i+1), "matrix": fmt.Sprintf(`{"shard":%q}`, s)})
		if r.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s", s, r.code, r.stdout)
		}
		if out["cache-hit"] != "true" || out["plan"] != "plan.json" || !strings.Contains(r.stdout, "the weight table is left as it is") {
			t.Errorf("shard %s: cache-hit %q plan %q; want a restore and no learning\n%s", s, out["cache-hit"], out["plan"], r.stdout)
		}
		if saves() != 0 {
			t.Errorf("shard %s saved to the cache: shard jobs must not (the merge job learns from every shard)", s)
		}
	}

	r, out = step(map[string]string{"mode": "merge", "shard-log-dirs": "shards/*/logs", "log-dir": "merged", "junit-dir": "merged-junit"}, "GITHUB_JOB=merge")
	if r.code != 0 || out["result"] != "success" {
		t.Fatalf("mode merge: exit %d, result %q\n%s\n%s", r.code, out["result"], r.stdout, r.stderr)
	}
	key := "sgpu-weights-gfx942-l99-4242-1-" + action.CacheLeg("sgpu-queue (merge)")
	e, ok := cacheSrv.Lookup(key, "")
	if !ok || saves() != 1 {
		t.Fatalf("mode merge saved %d entries, none under %s: %v", saves(), key, cacheSrv.Entries())
	}
	if local := readFile(t, filepath.Join(dir, out["weights-file"])); string(e.Data) != local || string(e.Data) == table {
		t.Errorf("saved table:\n%s\nlocal table:\n%s\nwant the same, learned from the shards' rows", e.Data, local)
	}
	var suites map[string]map[string]float64
	if err := json.Unmarshal([]byte(out["suites"]), &suites); err != nil || suites["north"]["items"] != 6 || suites["south"]["items"] != 4 {
		t.Errorf("merged suites output %q", out["suites"])
	}
	if out["report"] != "merged/report/schedule.md" || !strings.Contains(readFile(t, filepath.Join(dir, out["report"])), "### Shards") {
		t.Errorf("merge report output %q", out["report"])
	}

	for _, tc := range []struct {
		inputs map[string]string
		want   string
	}{
		{map[string]string{"mode": "scatter", "config": "ci/shards.conf"}, `input mode "scatter": want plan, run or merge`},
		{map[string]string{"mode": "plan", "config": "ci/shards.conf", "shards": "3", "gpus": "2"}, "mode plan needs input arch"},
		{map[string]string{"mode": "plan", "config": "ci/shards.conf", "arch": "gfx942", "shards": "0", "gpus": "2"}, `input shards "0"`},
		{map[string]string{"mode": "merge", "shard-log-dirs": "nothing/*/logs"}, `"nothing/*/logs" matches nothing`},
		{map[string]string{"mode": "run", "config": "ci/shards.conf", "gpus": "0,1", "shard": "4/3"}, `input shard "4/3": want I/K`},
		// An input of another mode is refused, not ignored: shards in a shard job would
		// have every leg of the matrix run every item.
		{map[string]string{"mode": "run", "config": "ci/shards.conf", "gpus": "0,1", "shards": "1/3"}, "input shards is read by mode plan only, and this step's mode is run: a shard job of the matrix sets shard: ${{ matrix.shard }}"},
		{map[string]string{"mode": "plan", "config": "ci/shards.conf", "arch": "gfx942", "shards": "3", "gpus": "2", "shard": "1/3", "shard-log-dirs": "shards/*/logs"}, "input shard-log-dirs is read by mode merge only"},
		{map[string]string{"mode": "merge", "shard-log-dirs": "shards/*/logs", "plan": "plan.json"}, "input plan is read by mode plan and run only, and this step's mode is merge: a merge reads the plan each shard copied into its log dir"},
	} {
		r, out := step(tc.inputs)
		if r.code != 2 || !strings.Contains(r.stdout, tc.want) || out["result"] != "failure" {
			t.Errorf("%v: exit %d, result %q; want 2 and %q in\n%s", tc.inputs, r.code, out["result"], tc.want, r.stdout)
		}
	}
}

// The first run of a workflow has no table anywhere: mode plan still gives the
// matrix (a warning says why the plan lists no item), and each shard runs the
// items of its hash.
func TestActionPlanFirstRun(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "e2e")
	cacheSrv := cachetest.New(t)
	env, outFile, _ := runner(t, dir, map[string]string{"mode": "plan", "config": "ci/shards.conf", "arch": "gfx942", "shards": "2", "gpus": "4", "plan": "out/the plan.json"}, cacheSrv.Env()...)
	r := sgpu(t, dir, env, "action")
	out := parseOutputs(t, outFile)
	if r.code != 0 || out["matrix"] != `{"shard":["1/2","2/2"]}` || out["plan"] != "out/the plan.json" || out["cache-hit"] != "false" {
		t.Fatalf("exit %d, outputs %v\n%s", r.code, out, r.stdout)
	}
	if !strings.Contains(r.stdout, "::warning::weight table") || !strings.Contains(r.stdout, "every item goes to the shard of the hash of its key") {
		t.Errorf("no warning that the plan lists no item:\n%s", r.stdout)
	}
	p, err := shard.Read(strings.NewReader(readFile(t, filepath.Join(dir, "out", "the plan.json"))), "plan")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Shards {
		for _, k := range s.Keys {
			if k != "gamma" { // an opaque suite is its one item, listed or not
				t.Errorf("shard %d lists %q with no table to plan from", s.Shard, k)
			}
		}
	}
}

// The plan job reads the level as the shard jobs' runs will: with hook-var renaming
// the level variable, from the renamed one, so it restores that level's table (a
// hit), not another level's. (Its config is a glob, which the action expands.)
func TestActionPlanLevelLikeTheRuns(t *testing.T) {
	t.Parallel()
	key := "sgpu-weights-gfx942-l3-4000-1"
	r, out := seededAction(t, key, map[string]string{"mode": "plan", "config": "ci/shard?.conf", "arch": "gfx942", "shards": "2", "gpus": "2",
		"hook-var": "level=MY_LEVEL"}, "MY_LEVEL=3", "TEST_LEVEL=1")
	if r.code != 0 || out["cache-hit"] != "true" || out["cache-matched-key"] != key {
		t.Errorf("exit %d, cache-hit %q, cache-matched-key %q: want the level-3 table MY_LEVEL names\n%s", r.code, out["cache-hit"], out["cache-matched-key"], r.stdout)
	}
}

// A run that stops in phase 3 (a setup fails) after the weight table was
// restored still says what the cache gave it: cache-hit and cache-matched-key
// are those of the restore, not false and empty.
func TestActionStopAfterRestore(t *testing.T) {
	t.Parallel()
	seeded := "sgpu-weights-gfx942-l99-4000-1"
	r, out := seededAction(t, seeded, map[string]string{"config": "ci/shards.conf", "arch": "gfx942", "gpus": "0,1"}, "FAIL_SETUP=1")
	if r.code != 1 || out["result"] != "failure" || !strings.Contains(r.stdout, "setup: pip install failed") {
		t.Fatalf("exit %d, outputs %v; want 1 and the setup's output\n%s", r.code, out, r.stdout)
	}
	if out["cache-hit"] != "true" || out["cache-matched-key"] != seeded {
		t.Errorf("cache outputs %q %q, want true and %s", out["cache-hit"], out["cache-matched-key"], seeded)
	}
}

// seededAction runs the action once on a copy of the e2e fixture, with a cache
// service holding a small table under key, and returns its result and outputs.
func seededAction(t *testing.T, key string, inputs map[string]string, extra ...string) (result, map[string]string) {
	t.Helper()
	dir := fixture(t, "e2e")
	cacheSrv := cachetest.New(t)
	cacheSrv.Put(key, "", []byte("gamma 0.7\nnorth/n.one 0.4\nsouth/s.one 0.3\n"))
	env, outFile, _ := runner(t, dir, inputs, append(cacheSrv.Env(), extra...)...)
	r := sgpu(t, dir, env, "action")
	return r, parseOutputs(t, outFile)
}
