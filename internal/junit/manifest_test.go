package junit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/treetest"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// A run deletes no merged file: those of suites it did not run are another run's
// results (docs/files.md). It carries their manifest entries while they are still
// what was written, so a later run of their suite may replace them; a changed file,
// a user's file and a path the manifest was made to name are not carried.
func TestOutputsKeepOthers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeIn(t, dir, name, content) }
	// Run 1 writes other.xml, edited.xml, kept.xml.
	o1, err := OpenOutputs(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"other.xml", "edited.xml", "kept.xml"} {
		if err := o1.Wrote(write(n, "<testsuites name=\""+n+"\"/>\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := o1.Save(); err != nil {
		t.Fatal(err)
	}
	// Between the runs: a user edits one, adds one of their own, and plants a path.
	write("edited.xml", "<testsuites name=\"mine now\"/>\n")
	write("user.xml", "<testsuites/>\n")
	outside := filepath.Join(t.TempDir(), "outside.xml")
	os.WriteFile(outside, []byte("x"), 0o644)
	f, _ := os.OpenFile(filepath.Join(dir, ManifestName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(strings.Repeat("a", 64) + " ../" + filepath.Base(outside) + "\n" + strings.Repeat("b", 64) + " .hidden.xml\n")
	f.Close()

	// Run 2 runs only the suite of kept.xml.
	o2, err := OpenOutputs(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o2.Wrote(write("kept.xml", "<testsuites name=\"run 2\"/>\n")); err != nil {
		t.Fatal(err)
	}
	if left := o2.KeepOthers(); strings.Join(left, ",") != "edited.xml,other.xml" {
		t.Errorf("left %v, want edited.xml and other.xml (the earlier run's files this run did not write)", left)
	}
	for _, n := range []string{"edited.xml", "kept.xml", "user.xml", "other.xml"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a path in the manifest reached outside the directory: %v", err)
	}
	if err := o2.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	got := string(data)
	for _, want := range []string{" kept.xml\n", " other.xml\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("manifest after run 2 lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"edited.xml", "user.xml", "outside", ".hidden"} {
		if strings.Contains(got, not) {
			t.Errorf("manifest after run 2 lists %q:\n%s", not, got)
		}
	}
	// A third run may replace other.xml: it is still what a run of this tool wrote.
	o3, _ := OpenOutputs(dir, dir)
	if err := o3.MayReplace("other.xml"); err != nil {
		t.Errorf("run 3 may not replace other.xml: %v", err)
	}
}

// A merged file replaces only a file this tool wrote and left unchanged: a user's
// file of the same name, a changed one and a link are Foreign, and a manifest
// checkpointed after a write still lists the last run's files.
func TestOutputsMayReplace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeIn(t, dir, name, content) }
	o1, _ := OpenOutputs(dir, dir)
	for _, n := range []string{"ours.xml", "edited.xml", "linked.xml"} {
		if err := o1.Wrote(write(n, "<testsuites name=\""+n+"\"/>\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := o1.Save(); err != nil {
		t.Fatal(err)
	}
	write("user.xml", "<testsuites name=\"mine\"/>\n")
	write("edited.xml", "<testsuites name=\"mine now\"/>\n")
	os.Remove(filepath.Join(dir, "linked.xml"))
	if err := os.Symlink("user.xml", filepath.Join(dir, "linked.xml")); err != nil {
		t.Fatal(err)
	}
	o2, err := OpenOutputs(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]*Foreign{
		"ours.xml": nil, "new.xml": nil,
		"user.xml": {Name: "user.xml"}, "edited.xml": {Name: "edited.xml", Changed: true}, "linked.xml": {Name: "linked.xml"},
	} {
		err := o2.MayReplace(name)
		var f *Foreign
		switch {
		case want == nil && err != nil:
			t.Errorf("MayReplace(%s) = %v, want nil", name, err)
		case want != nil && (!errors.As(err, &f) || *f != *want):
			t.Errorf("MayReplace(%s) = %v, want %+v", name, err, want)
		}
	}
	// Run 2 writes new.xml; killed before Save, its checkpoint lists it and ours.xml.
	if err := o2.Wrote(write("new.xml", "<testsuites/>\n")); err != nil {
		t.Fatal(err)
	}
	if err := o2.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	o3, _ := OpenOutputs(dir, dir)
	for _, n := range []string{"ours.xml", "new.xml"} {
		if err := o3.MayReplace(n); err != nil {
			t.Errorf("after the checkpoint, MayReplace(%s) = %v", n, err)
		}
	}
}

// A test case keeps gtest's file and line (a line that is not a number is dropped),
// every failure of a case that has several, and a bounded tail of huge output.
func TestCaseDetails(t *testing.T) {
	huge := strings.Repeat("0123456789abcdef", 4*maxCaseOutput/16) + "LAST WORDS"
	in := `<testsuites><testsuite name="OperatorTest" tests="2" failures="1" errors="0">
<testcase name="Cast/0" file="tests/cpp/operator/test_cast.cu" line="87" classname="OperatorTest" time="0.5">
  <failure message="first">one</failure><failure message="second">two</failure>
  <system-out>` + huge + `</system-out>
</testcase>
<testcase name="Cast/1" file="tests/cpp/operator/test_cast.cu" line="eighty" classname="OperatorTest" time="0.25"/>
</testsuite></testsuites>`
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "core.xml"), []byte(in), 0o644)
	d, err := Merge(context.Background(), verdict.Suite{Label: "core", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "core"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, back := encode(t, d)
	_, c := findCase(back, "Cast/0")
	if c == nil || c.File != "tests/cpp/operator/test_cast.cu" || c.Line != "87" {
		t.Fatalf("file/line not kept: %+v", c)
	}
	if c.Failure == nil || c.Failure.Message != "first" || !strings.Contains(c.Failure.Body, "one") || !strings.Contains(c.Failure.Body, "second\ntwo") {
		t.Errorf("failures: %+v", c.Failure)
	}
	out := string(c.SystemOut)
	if len(out) > maxCaseOutput+200 || !strings.HasSuffix(out, "LAST WORDS") || !strings.HasPrefix(out, "[sgpu-queue: the first ") {
		t.Errorf("system-out of %d bytes not bounded to its tail: %.120q", len(out), out)
	}
	_, c = findCase(back, "Cast/1")
	if c == nil || c.Line != "" || c.File == "" {
		t.Errorf("a non-numeric line was kept: %+v", c)
	}
	validateXSD(t, data)
}

// writeIn writes a file of a user's or an earlier run's into dir.
func writeIn(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Saving the manifest goes through a temporary file of its own: a user's file
// named like a fixed temporary name is left as it was, and no temporary stays.
func TestOutputsSaveLeavesUsersFiles(t *testing.T) {
	dir := t.TempDir()
	user := writeIn(t, dir, ManifestName+".tmp", "mine\n")
	o, err := OpenOutputs(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Wrote(writeIn(t, dir, "a.xml", "<testsuites/>\n")); err != nil {
		t.Fatal(err)
	}
	if err := o.Save(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(user); string(b) != "mine\n" {
		t.Errorf("%s = %q, want the user's content", user, b)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{ManifestName, ManifestName + ".tmp", "a.xml"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("files %q, want %q", names, want)
	}
}

// WriteSuites holds the JUnit dir's lock from reading the manifest to saving it, so
// a second run writing the same directory at once waits, and reads the manifest
// with the first run's entries: neither loses the other's. Checked from inside the
// write: another taker of the lock is held off.
func TestWriteSuitesHoldsTheDirLock(t *testing.T) {
	repo := t.TempDir()
	dir := filepath.Join(repo, "test-results", "junit")
	suites := []verdict.Suite{{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Finished: true}}}}
	var during error
	doc := func(verdict.Suite) (*Doc, error) {
		release, err := safefs.LockDir(context.Background(), "test", dir, 50*time.Millisecond)
		if err == nil {
			release()
		}
		during = err
		return emptyDoc("s"), nil
	}
	if written := WriteSuites(context.Background(), repo, dir, suites, doc, &recordLog{}); len(written) != 1 {
		t.Fatalf("wrote %v", written)
	}
	var le *safefs.LockError
	if !errors.As(during, &le) || !le.Busy {
		t.Errorf("another taker of the JUnit dir's lock during the write: %v, want held off (busy)", during)
	}
	// Released after: a second run takes it at once.
	release, err := safefs.LockDir(context.Background(), "test", dir, time.Second)
	if err != nil {
		t.Fatalf("lock after the write: %v", err)
	}
	release()
}

// A suite of this run whose merge fails leaves its old file, and the manifest keeps
// listing it: the next run of the suite replaces it instead of taking it for a
// user's.
func TestWriteSuitesFailedMergeKeepsEntry(t *testing.T) {
	repo := t.TempDir()
	dir := filepath.Join(repo, "junit")
	suites := []verdict.Suite{{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Finished: true}}}}
	ok := func(verdict.Suite) (*Doc, error) { return emptyDoc("s"), nil }
	broken := func(verdict.Suite) (*Doc, error) { return nil, errors.New("cannot merge") }
	for i, doc := range []func(verdict.Suite) (*Doc, error){ok, broken, ok} {
		log := &recordLog{}
		written := WriteSuites(context.Background(), repo, dir, suites, doc, log)
		if want := i != 1; (len(written) == 1) != want {
			t.Errorf("run %d wrote %v, want s.xml written %v\n%s", i+1, written, want, strings.Join(log.lines, ""))
		}
	}
}

// A wait for another run's hold on the JUnit dir ends with wait (the engine's next
// signal): nothing is written, the files are named lost saying a signal stopped the
// wait, and the other run's hold is untouched.
func TestWriteSuitesWaitEndsOnSignal(t *testing.T) {
	repo := t.TempDir()
	dir := filepath.Join(repo, "test-results", "junit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	release, err := safefs.LockDir(context.Background(), "test", dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	wait, cancel := context.WithCancel(context.Background())
	cancel() // the signal came
	suites := []verdict.Suite{{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Finished: true}}}}
	doc := func(verdict.Suite) (*Doc, error) { return emptyDoc("s"), nil }
	log := &recordLog{}
	var written []string
	treetest.Finishes(t, func() { written = WriteSuites(wait, repo, dir, suites, doc, log) })
	said := strings.Join(log.lines, "\n")
	if len(written) != 0 || !strings.Contains(said, "lost the merged JUnit") || !strings.Contains(said, "was stopped (a signal)") {
		t.Errorf("wrote %v, said:\n%s", written, said)
	}
	if _, err := os.Stat(filepath.Join(dir, "s.xml")); !os.IsNotExist(err) {
		t.Errorf("s.xml written under another run's hold: %v", err)
	}
}
