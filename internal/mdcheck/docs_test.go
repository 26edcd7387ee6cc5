package mdcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repo is the repository root, seen from this package.
const repo = "../.."

// TestRepositoryDocs: every relative link of README.md and docs/*.md reaches a file or
// directory of the repository, and every #anchor a heading of the page it names, so
// that the reference pages and the README stay one web of links when either moves.
func TestRepositoryDocs(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	pages = append(pages, filepath.Join(repo, "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = Anchors(string(data))
		return anchors[path]
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, page)
		for _, link := range Links(string(data)) {
			low := strings.ToLower(link)
			if strings.HasPrefix(low, "https://") || strings.HasPrefix(low, "http://") || strings.HasPrefix(low, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: no such file", rel, link)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s: link %q: no heading with that anchor in %s", rel, link, filepath.Base(path))
			}
		}
	}
}

// docsPage is a reference page cited by name in the code.
var docsPage = regexp.MustCompile(`docs/[a-z0-9-]+\.md`)

// TestCodeCitesExistingDocs: every docs/<page>.md the code or its test data names
// exists, so a comment never points a contributor at a page that is not there.
func TestCodeCitesExistingDocs(t *testing.T) {
	cited := 0
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".sh") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, page := range docsPage.FindAllString(string(data), -1) {
			cited++
			if _, err := os.Stat(filepath.Join(repo, page)); err != nil {
				rel, _ := filepath.Rel(repo, path)
				t.Errorf("%s cites %s, which does not exist", rel, page)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no citation of docs/*.md found: is the walk looking at the repository?")
	}
}
