package junit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestReadFailures merges real item files into a suite's file on disk and reads its
// failed cases back by item: the cases the items' own XML recorded, in file order,
// and none of the error cases sgpu-queue added (no XML, cut off).
func TestReadFailures(t *testing.T) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	twoFail := `<testsuites><testsuite name="pytest"><testcase classname="tests.t" name="test_ok"/>` +
		`<testcase classname="tests.t" name="test_a"><failure message="assert 1 == 2" type="AssertionError">E   assert 1 == 2</failure></testcase>` +
		`<testcase name="test_b"><error message="RuntimeError: HIP error">trace</error></testcase></testsuite></testsuites>`
	writeTree(t, dir, map[string]string{"a.xml": twoFail, "b.xml": passXML, "stray.xml": failXML}, since.Add(time.Minute))
	items := []Item{
		{Tag: "a", Finished: true, RC: 1},
		{Tag: "b", Finished: true, RC: 1}, // failed though its XML passed: sgpu-queue.item-failed
		{Tag: "c", Finished: true, RC: 139},
	}
	doc, err := Merge(context.Background(), "torch", dir, "", items, since)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "torch.xml")
	if err := doc.WriteFile(filepath.Dir(path), path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFailures(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Failures{Suite: "torch", Items: map[string][]Failed{
		"a": {
			{Name: "tests.t::test_a", Type: "AssertionError", Message: "assert 1 == 2", Body: "E   assert 1 == 2"},
			{Name: "test_b", Error: true, Message: "RuntimeError: HIP error", Body: "trace"},
		},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadFailures:\n got %+v\nwant %+v", got, want)
	}
}

func TestReadFailuresBadFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.xml": "", "html.xml": "<html></html>", "cut.xml": "<testsuites><testsuite>"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFailures(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ReadFailures(filepath.Join(dir, "missing.xml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
}
