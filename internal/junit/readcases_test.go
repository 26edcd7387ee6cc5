package junit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// A merged file reads back with each case's item (its suite's sgpu.item), its
// result, type, message and body, in file order; the cases sgpu-queue added say
// so by their type.
func TestReadCasesOfMergedFile(t *testing.T) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	twoFail := `<testsuites><testsuite name="pytest"><testcase classname="tests.t" name="test_ok"/>` +
		`<testcase classname="tests.t" name="test_a"><failure message="assert 1 == 2" type="AssertionError">E   assert 1 == 2</failure></testcase>` +
		`<testcase name="test_b"><error message="RuntimeError: HIP error">trace</error></testcase></testsuite></testsuites>`
	writeTree(t, dir, map[string]string{"a.xml": twoFail, "b.xml": passXML}, since.Add(time.Minute))
	items := []verdict.Item{
		{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true},
		{ItemID: record.ItemID{Tag: "b"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}, // failed though its XML passed: sgpu-queue.item-failed
	}
	doc, err := Merge(context.Background(), verdict.Suite{Label: "torch", Items: items}, Source{Dir: dir}, since)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "torch.xml")
	if err := doc.WriteFile(filepath.Dir(path), path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	type c struct {
		Item, Name string
		Result     CaseResult
		Type, Msg  string
	}
	var short []c
	for _, k := range got {
		short = append(short, c{k.Tag, k.Name, k.Result, k.Type, k.Message})
	}
	want := []c{
		{"a", "test_ok", CasePassed, "", ""},
		{"a", "test_a", CaseFailed, "AssertionError", "assert 1 == 2"},
		{"a", "test_b", CaseErrored, "", "RuntimeError: HIP error"},
		{"b", "test_ok_1", CasePassed, "", ""},
		{"b", "test_ok_2", CasePassed, "", ""},
		{"b", "b", CaseErrored, "sgpu-queue.item-failed", "item b of suite torch: exit code 1, but its JUnit XML records no failure"},
	}
	if diff := cmp.Diff(want, short); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if got[1].Body != "E   assert 1 == 2" {
		t.Errorf("body %q", got[1].Body)
	}
}

func TestReadCasesBadFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.xml": "", "html.xml": "<html></html>", "cut.xml": "<testsuites><testsuite>"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadCases(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ReadCases(filepath.Join(dir, "missing.xml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
}
