package mdcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSlug: GitHub's anchors of headings, as github.com renders them.
func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Files written (TE's layout)", "files-written-tes-layout"},
		{"First: `sgpu-queue verify`", "first-sgpu-queue-verify"},
		{"Single- and multi-GPU switches", "single--and-multi-gpu-switches"},
		{"`queue/run.json`", "queuerunjson"},
		{"Listing: `TE_CI_ITEM <tag>`", "listing-te_ci_item-tag"},
		{"Phases 0–8", "phases-08"},
		{"A [linked](other.md#x) heading", "a-linked-heading"},
		{"An ![image](pic.svg) heading", "an-image-heading"},
		{"Tom &amp; Jerry", "tom--jerry"},
		{"<span id=\"x\">HTML</span> tags", "html-tags"},
		{"**Bold** text", "bold-text"},
		{"Émigré Ünïcode", "émigré-ünïcode"},
		{"Launch 🚀 now", "launch--now"},
		{"sgpu-queue merge and the action's `mode: merge`", "sgpu-queue-merge-and-the-actions-mode-merge"},
		{"  padded  ", "padded"},
	} {
		if got := Slug(c.heading); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	md := strings.Join([]string{
		"# sgpu-queue",
		"### Files written (TE's layout)",
		"   ## Indented by three",
		"    ## indented by four: code",
		"## Closing hashes ##",
		"## C#",
		"## Notes",
		"## Notes",
		"## Notes-1",
		"```",
		"## not a heading",
		"```",
		"#no-space",
		`<a name="kept-anchor"></a> <div id='an-id'>`,
		"`<a name=\"in-code\">`",
	}, "\n")
	got := Anchors(md)
	want := []string{"sgpu-queue", "files-written-tes-layout", "indented-by-three", "closing-hashes", "c", "notes", "notes-1", "notes-1-1",
		"kept-anchor", "an-id"}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no anchor %q in %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("anchors %v, want exactly %v", got, want)
	}
}

// TestCheckLinks: each way a link of a page can lead nowhere, on a small tree.
func TestCheckLinks(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pages/guide.md", "# Guide\n\n## Multi-GPU suites\n\n<a id=\"held\"></a>\n")
	write("pages/a b.md", "# Spaced\n")
	write("main.go", "package main\n")
	write("README.md", strings.Join([]string{
		"# Top",
		"[ok](pages/guide.md) [ok](pages/guide.md#multi-gpu-suites) [ok](#top) [ok](pages/) [ok](pages/guide.md#held)",
		"[ok](https://example.com/x#y) [ok](mailto:a@b) [ok](pages/a%20b.md#spaced) [ok](<pages/a b.md>) [ok](main.go#L3-L5)",
		"[ok](/pages/guide.md?plain=1#guide) [ok](./pages/../README.md#top)",
		"[gone](pages/missing.md)",
		"[anchor](pages/guide.md#Multi-GPU-suites)",
		"[own](#nowhere)",
		"[out](../outside.md)",
		"[dir](pages/#guide)",
		"[go](main.go#main)",
		"[empty]()",
		"[bad](pages/a%zz.md)",
		"```",
		"[fenced](ignored.md)",
		"```",
	}, "\n"))
	got, err := CheckLinks(root, []string{"README.md", "pages/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	want := []string{
		`README.md:5: link "pages/missing.md": no such file or directory`,
		`README.md:6: link "pages/guide.md#Multi-GPU-suites": no heading or id with anchor "Multi-GPU-suites" in pages/guide.md (did you mean #multi-gpu-suites?)`,
		`README.md:7: link "#nowhere": no heading or id with anchor "nowhere" in README.md`,
		`README.md:8: link "../outside.md": outside the repository`,
		`README.md:9: link "pages/#guide": an anchor on a directory`,
		`README.md:10: link "main.go#main": an anchor on a file that is not Markdown (only #L<n> or #L<n>-L<m> lines)`,
		`README.md:11: link "": empty target`,
		`README.md:12: link "pages/a%zz.md": bad percent-encoding: invalid URL escape "%zz"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckLinks:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
