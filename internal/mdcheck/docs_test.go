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

// TestRepositoryDocs: every link of README.md and docs/*.md leads somewhere, as GitHub
// resolves it (CheckLinks): a relative target to a file or directory of the
// repository, an #anchor to a heading or id of the page it names, so that the front
// door and the pages behind it stay one web of links when text moves between them.
func TestRepositoryDocs(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	pages = append(pages, filepath.Join(repo, "README.md"))
	links := 0
	for i, p := range pages {
		pages[i], _ = filepath.Rel(repo, p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		links += len(Links(string(data)))
	}
	problems, err := CheckLinks(repo, pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if links < 100 {
		t.Errorf("only %d links in README.md and docs/*.md: is the parser finding them?", links)
	}
}

// docsPage is a reference page cited by name in the code, maybe with an anchor.
var docsPage = regexp.MustCompile(`docs/[a-z0-9-]+\.md(?:#[a-z0-9_-]*[a-z0-9_])?`)

// TestCodeCitesExistingDocs: every docs/<page>.md[#anchor] the code or its test data
// names exists, so a comment never points a contributor at a page or a section that
// is not there.
func TestCodeCitesExistingDocs(t *testing.T) {
	c := checker{root: repo, anchors: map[string]map[string]bool{}}
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
		for _, cite := range docsPage.FindAllString(string(data), -1) {
			cited++
			if why := c.check("README.md", cite); why != "" {
				rel, _ := filepath.Rel(repo, path)
				t.Errorf("%s cites %s: %s", rel, cite, why)
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

// TestReadmeIsAFrontDoor: README.md stays short (the reference lives in docs/), and
// its first two commands are the demo run and the test command .ci/run runs, as the
// same line.
func TestReadmeIsAFrontDoor(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 250 {
		t.Errorf("README.md has %d lines: move the reference into docs/ (at most 250)", n)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindAllStringSubmatch(string(readme), 2)
	if len(blocks) < 2 {
		t.Fatalf("README.md has %d sh blocks, want the demo and the tests first", len(blocks))
	}
	if !strings.Contains(blocks[0][1], "go run . run ") || !strings.Contains(blocks[0][1], "testdata/demo") {
		t.Errorf("README.md's first command is %q, want the demo run", blocks[0][1])
	}
	ci, err := os.ReadFile(filepath.Join(repo, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(blocks[1][1]) + `$`).Match(ci) {
		t.Errorf("README.md's second command %q is not a line of .ci/run", blocks[1][1])
	}
}
