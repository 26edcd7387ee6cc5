package manifest

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/problems.golden")

const good = `name: x
description: y
inputs:
  gpus:
    description: "GPU ids"
    default: ""
  matrix:
    description: "leave it"
    default: ${{ toJSON(matrix) }}
  token:
    default: ${{ github.token }}
outputs:
  result:
    description: "success or failure"
runs:
  using: docker
  image: docker://ghcr.io/rocm/sgpu-queue:v1.0.0
  args: ["${{ inputs.gpus }}"]
  env:
    GPUS: ${{ inputs.gpus }}
`

// Each manifest the runner refuses, with the one-line problems a reader sees
// (pinned in testdata/problems.golden).
func TestCheckRefuses(t *testing.T) {
	cases := []struct{ name, yml string }{
		{"expression in a description (issue 18)", strings.Replace(good, `"GPU ids"`, `"e.g. ${{ job.container.id }}"`, 1)},
		{"expression in the top description", strings.Replace(good, "description: y", "description: ${{ github.repository }}", 1)},
		{"secrets in a default", strings.Replace(good, "${{ github.token }}", "${{ secrets.GITHUB_TOKEN }}", 1)},
		{"inputs in a default", strings.Replace(good, `default: ""`, `default: ${{ inputs.token }}`, 1)},
		{"github in runs.args", strings.Replace(good, "${{ inputs.gpus }}\"]", "${{ github.sha }}\"]", 1)},
		{"unclosed expression in a default", strings.Replace(good, "${{ github.token }}", "${{ github.token", 1)},
		{"expression in an output description", strings.Replace(good, `"success or failure"`, `"${{ steps.x.outputs.y }}"`, 1)},
		{"unknown output key", strings.Replace(good, `description: "success or failure"`, "description: z\n    valu: 1", 1)},
		{"unknown runs key", strings.Replace(good, "  using: docker", "  using: docker\n  main: x.js", 1)},
		{"node action", strings.Replace(good, "using: docker", "using: node20", 1)},
		{"no image", strings.Replace(good, "  image: docker://ghcr.io/rocm/sgpu-queue:v1.0.0\n", "", 1)},
		{"empty image", strings.Replace(good, "image: docker://ghcr.io/rocm/sgpu-queue:v1.0.0", `image: ""`, 1)},
		{"no runs", good[:strings.Index(good, "runs:")]},
		{"no name", strings.Replace(good, "name: x\n", "", 1)},
		{"input not a mapping", strings.Replace(good, "  gpus:\n    description: \"GPU ids\"\n    default: \"\"", "  gpus: 4", 1)},
		{"expression in an unknown top key", good + "branding:\n  color: ${{ matrix.c }}\n"},
		{"not YAML", "name: [x\n"},
		{"not a mapping", "- x\n"},
		{"empty", ""},
	}
	var b strings.Builder
	for _, c := range cases {
		probs := Check("action.yml", []byte(c.yml))
		if len(probs) == 0 {
			t.Errorf("%s: accepted", c.name)
		}
		b.WriteString("# " + c.name + "\n")
		for _, p := range probs {
			b.WriteString(p.Error() + "\n")
		}
	}
	golden.Check(t, filepath.Join("testdata", "problems.golden"), []byte(b.String()), *update)
}

func TestCheckAccepts(t *testing.T) {
	if probs := Check("action.yml", []byte(good)); len(probs) != 0 {
		t.Errorf("refused: %v", probs)
	}
}

// The exact failure: the place is the description's value, as the runner
// and act report it ("Line: 20 Column 18").
func TestProblemPointsAtTheValue(t *testing.T) {
	probs := Check("a.yml", []byte("name: x\ndescription: y\ninputs:\n  c:\n    description: \"${{ job.container.id }}\"\nruns:\n  using: docker\n  image: x\n"))
	var p *Problem
	if len(probs) != 1 || !asProblem(probs[0], &p) || p.Line != 5 || p.Column != 18 || p.Path != "inputs.c.description" {
		t.Fatalf("got %v", probs)
	}
}

func asProblem(err error, p **Problem) bool {
	q, ok := err.(*Problem)
	*p = q
	return ok
}

// Every action manifest in the repository loads under the runner's rules and is a
// container action, so a ${{ }} in a description cannot come back.
func TestRepositoryManifestsLoad(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == ".git" && path != root) {
			return filepath.SkipDir
		}
		if n := d.Name(); !d.IsDir() && (n == "action.yml" || n == "action.yaml") {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 {
		t.Fatalf("found %v: want action.yml and .github/actions/dev/action.yml", found)
	}
	for _, path := range found {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, p := range Check(rel, data) {
			t.Error(p)
		}
	}
}
