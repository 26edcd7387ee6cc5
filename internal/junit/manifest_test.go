package junit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run removes the merged files of suites it no longer runs, and only those that are
// still exactly what an earlier run wrote: a user's file, a changed file, a file the
// manifest names with a path, and files of suites that are still run all stay.
func TestOutputsRemoveOnlyWhatTheyWrote(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeIn(t, dir, name, content) }
	// Run 1 writes gone.xml, edited.xml, kept.xml.
	o1, err := OpenOutputs(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gone.xml", "edited.xml", "kept.xml"} {
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
	o2.Keep("kept.xml")
	removed, changed := o2.RemoveStale()
	if strings.Join(removed, ",") != "gone.xml" || strings.Join(changed, ",") != "edited.xml" {
		t.Errorf("removed %v, changed %v", removed, changed)
	}
	for _, n := range []string{"edited.xml", "kept.xml", "user.xml"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.xml")); !os.IsNotExist(err) {
		t.Errorf("gone.xml still there: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a path in the manifest reached outside the directory: %v", err)
	}
	if err := o2.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if got := string(data); !strings.Contains(got, " kept.xml\n") || strings.Contains(got, "gone.xml") || strings.Contains(got, "edited.xml") || strings.Contains(got, "user.xml") {
		t.Errorf("manifest after run 2:\n%s", got)
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
	d, err := Merge(context.Background(), "core", dir, "", []Item{{Tag: "core", Finished: true, RC: 1}}, time.Time{})
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
