package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// adapterItems lists a cmd suite "c" from lines (a real command file, read by the
// real adapter) and returns its items for dispatch, as the engine makes them.
func (h *harness) adapterItems(mode config.Mode, lines string) []expand.Item {
	h.t.Helper()
	repo := filepath.Join(h.dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "items.cmds"), []byte(lines), 0o644); err != nil {
		h.t.Fatal(err)
	}
	suite := config.Suite{Label: "c", LogFile: "c.log", Mode: config.Cmd, Args: []string{"items.cmds"}}
	a, err := adapter.New(suite)
	if err != nil {
		h.t.Fatal(err)
	}
	l, err := a.List(context.Background(), h.cfg.Exec, adapter.Listing{Env: h.cfg.Env, Dir: repo})
	if err != nil {
		h.t.Fatal(err)
	}
	suite.Mode = mode // the tool the no-run line names
	if mode == config.Pytest || mode == config.CTest {
		a = given{a} // what the evidence rules read: pytest and ctest items always write JUnit
	}
	var items []expand.Item
	for i, it := range l.Items {
		items = append(items, expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "c", Tag: it.Tag}, Seq: i}, Suite: suite, Adapter: a, Unit: it})
	}
	h.cfg.RepoRoot = repo
	return items
}

// adapted is it with its suite's adapter, as phase 1 lists it.
func adapted(it expand.Item) expand.Item {
	a, err := adapter.New(it.Suite)
	if err != nil {
		panic(err)
	}
	it.Adapter, it.Unit = a, adapter.Item{Tag: it.Tag}
	return it
}

// given is a cmd adapter whose items, as pytest's and ctest's, always write the
// JUnit file they are given.
type given struct{ adapter.Adapter }

func (given) JUnit() adapter.JUnit { return adapter.JUnitGiven }

// An adapter item runs its adapter's command from the repo root, with its GPU
// pinned in every visible-devices variable, the level, none of the hook contract's
// switches, and its JUnit file (junit.ItemFile) mapped to where commands run, its
// folder made; it gets no working directory of its own.
func TestAdapterItemCommand(t *testing.T) {
	h := newHarness(t, "3")
	junitDir := filepath.Join(h.dir, "junit")
	h.cfg.JUnitPrefix = junitDir + "/"
	h.cfg.JUnitSuffix = ".xml"
	h.cfg.AlsoPin = []string{"ROCR_VISIBLE_DEVICES"}
	h.cfg.Env = append(h.cfg.Env, "TEST_FILTER=stale", "TE_CI_LIST_ITEMS=1")
	// Where commands run the JUnit folder has another name (as in a container).
	if err := os.Symlink(junitDir, filepath.Join(h.dir, "there")); err != nil {
		t.Fatal(err)
	}
	h.cfg.MapPath = func(p string) (string, error) {
		return strings.Replace(p, junitDir, filepath.Join(h.dir, "there"), 1), nil
	}
	show := `echo "pin=$HIP_VISIBLE_DEVICES/$ROCR_VISIBLE_DEVICES level=$TEST_LEVEL filter=[$TEST_FILTER$TE_CI_LIST_ITEMS] pwd=$PWD junit=$SGPU_JUNIT_XML"; echo "<testsuite name=\"x\" tests=\"0\"/>" > "$SGPU_JUNIT_XML"`
	items := h.adapterItems(config.Cmd, "tests/a/test_x.py "+show+"\n"+`back\slash `+show+"\nbare true\nfails exit 3\n")
	res := h.run(context.Background(), items...)
	got := map[string]outcome.Outcome{}
	for _, a := range res.Attempts {
		got[items[a.Item].Tag] = a.Outcome
	}
	want := map[string]outcome.Outcome{"tests/a/test_x.py": outcome.OK, `back\slash`: outcome.OK, "bare": outcome.OK, "fails": outcome.Failed}
	for tag, o := range want {
		if got[tag] != o {
			t.Errorf("%s: outcome %q, want %q (a cmd item that writes no JUnit is not a no-run)", tag, got[tag], o)
		}
	}
	for _, tag := range []string{"tests/a/test_x.py", `back\slash`} {
		rel, _ := junit.ItemFile(tag, ".xml", true)
		if _, err := os.Stat(filepath.Join(junitDir, "c", filepath.FromSlash(rel))); err != nil {
			t.Errorf("%s: its JUnit file is not where ItemFile names it: %v", tag, err)
		}
		log := readFile(t, h.layout.ItemLog("c", tag))
		wantLine := "pin=3/3 level=1 filter=[] pwd=" + h.cfg.RepoRoot + " junit=" + filepath.Join(h.dir, "there", "c", filepath.FromSlash(rel))
		if !strings.Contains(log, wantLine) {
			t.Errorf("%s: log %q lacks %q", tag, log, wantLine)
		}
	}
	if entries, _ := os.ReadDir(h.layout.CwdDir()); len(entries) != 0 {
		t.Errorf("adapter items got working directories: %v", entries)
	}
}

// An item of a mode that always writes its JUnit (pytest, ctest) that exits 0
// without it ran nothing: no-run, and its log says why.
func TestAdapterItemNoRun(t *testing.T) {
	h := newHarness(t, "0")
	h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
	h.cfg.JUnitSuffix = ".xml"
	items := h.adapterItems(config.Pytest, "tests/gone.py true\ntests/there.py echo '<testsuite name=\"x\" tests=\"0\"/>' >\"$SGPU_JUNIT_XML\"\n")
	res := h.run(context.Background(), items...)
	for _, a := range res.Attempts {
		tag := items[a.Item].Tag
		want := map[string]outcome.Outcome{"tests/gone.py": outcome.NoRun, "tests/there.py": outcome.OK}[tag]
		if a.Outcome != want {
			t.Errorf("%s: outcome %q, want %q", tag, a.Outcome, want)
		}
	}
	if log := readFile(t, h.layout.ItemLog("c", "tests/gone.py")); !strings.Contains(log, "sgpu-queue: no-run: this item ran nothing: pytest exited 0 without writing the JUnit XML it was given") {
		t.Errorf("the no-run item's log does not say why:\n%s", log)
	}
}

// An item that exits 0 with a JUnit file that cannot be parsed (cut off
// mid-element, empty) fails, bad-junit, and its log says why, whether its tool
// always writes the file (pytest) or may write none (cmd); one that exits non-zero
// is failed by its exit code first (docs/outcomes.md).
func TestBadJUnit(t *testing.T) {
	for _, mode := range []config.Mode{config.Pytest, config.Cmd} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, "0")
			h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
			h.cfg.JUnitSuffix = ".xml"
			cut := `printf '<testsuite name="x" tests="1"><testcase classname="x" na' >"$SGPU_JUNIT_XML"`
			items := h.adapterItems(mode, "cut "+cut+"\nempty : >\"$SGPU_JUNIT_XML\"\nfails "+cut+"; exit 3\n")
			res := h.run(context.Background(), items...)
			want := map[string]outcome.Outcome{"cut": outcome.BadJUnit, "empty": outcome.BadJUnit, "fails": outcome.Failed}
			for _, a := range res.Attempts {
				tag := items[a.Item].Tag
				if a.Outcome != want[tag] {
					t.Errorf("%s: outcome %q, want %q", tag, a.Outcome, want[tag])
				}
			}
			for tag, why := range map[string]string{"cut": "XML syntax error", "empty": "empty file"} {
				log := readFile(t, h.layout.ItemLog("c", tag))
				if !strings.Contains(log, "sgpu-queue: bad JUnit: it exited 0, but its JUnit XML "+filepath.Join(h.dir, "junit", "c", tag+".xml")+
					" cannot be parsed: ") || !strings.Contains(log, why) {
					t.Errorf("%s: the log does not say why:\n%s", tag, log)
				}
			}
		})
	}
}

// An adapter item with a time limit of its own (ctest's TIMEOUT) gets a hang
// deadline of at least that limit plus the slack, so that the tool's own limit,
// which fails the test, fires first.
func TestAdapterDeadline(t *testing.T) {
	on := Timeout{Factor: 3, Min: time.Minute, Max: time.Hour}
	a, err := adapter.New(config.Suite{Mode: config.CTest})
	if err != nil {
		t.Fatal(err)
	}
	list, err := adapter.New(config.Suite{Mode: config.List})
	if err != nil {
		t.Fatal(err)
	}
	known := func(w float64, own time.Duration, ad adapter.Adapter) expand.Item {
		return expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "c", Tag: "t"}, Weight: w, Known: true}, Adapter: ad, Unit: adapter.Item{Tag: "t", Timeout: own}}
	}
	tests := []struct {
		name    string
		timeout Timeout
		it      expand.Item
		want    time.Duration
		why     string
	}{
		{"learned deadline above its own limit", on, known(100, time.Minute, a), 300 * time.Second, "3 × its learned weight"},
		{"its own limit raises a short deadline", on, known(10, 5*time.Minute, a), 5*time.Minute + ownLimitSlack, "its own time limit 5m0s (ctest TIMEOUT) + 30s"},
		{"above the maximum too", on, known(10, 2*time.Hour, a), 2*time.Hour + ownLimitSlack, "its own time limit 2h0m0s"},
		{"no deadline stays none", Timeout{}, known(10, 5*time.Minute, a), 0, ""},
		{"a list item has no limit of its own", on, known(10, 0, list), time.Minute, "3 × its learned weight"},
	}
	for _, tt := range tests {
		d := &dispatcher{cfg: Config{Policy: Policy{Timeout: tt.timeout}}}
		got := d.deadline(tt.it, 1)
		if got.limit != tt.want || !strings.Contains(got.why, tt.why) {
			t.Errorf("%s: deadline %s (%s), want %s (%s)", tt.name, got.limit, got.why, tt.want, tt.why)
		}
	}
}

// A list item's JUnit folder, <prefix><label>/, is there before it runs: a script
// that writes <prefix><tag>.xml without mkdir -p writes it, and its item is ok, not
// a no-run.
func TestListItemJUnitFolderExists(t *testing.T) {
	h := newHarness(t, "0")
	h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
	h.cfg.JUnitSuffix = ".xml"
	script := "#!/bin/sh\necho '<testsuite name=\"s\" tests=\"1\"><testcase name=\"t\"/></testsuite>' >\"${JUNITXML_PREFIX}${TEST_FILTER}${JUNITXML_SUFFIX}\"\n"
	if err := os.WriteFile(h.script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res := h.run(context.Background(), h.item("writes_xml", 1))
	if len(res.Attempts) != 1 || res.Attempts[0].Outcome != outcome.OK {
		t.Fatalf("attempts %+v, want one ok\n%s", res.Attempts, h.console.String())
	}
	if _, err := os.Stat(filepath.Join(h.dir, "junit", "s", "writes_xml.xml")); err != nil {
		t.Errorf("the item's XML: %v", err)
	}
}
