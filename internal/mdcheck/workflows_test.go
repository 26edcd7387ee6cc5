package mdcheck

import (
	"slices"
	"testing"
)

func TestWorkflows(t *testing.T) {
	md := "# Page\n\n```yaml\non: push\njobs: {}\n```\n\ntext\n\n```yaml\njobs:\n  a:\n    runs-on: x\n```\n\n" +
		"```yaml\ninputs:\n  x: 1\n```\n\n```sh\non: push\n```\n\n```yaml\n# a comment\non:\n  push:\n```\n"
	got := Workflows(md)
	want := []Snippet{
		{Line: 3, YAML: "on: push\njobs: {}\n"},
		{Line: 10, YAML: "on: push\njobs:\n  a:\n    runs-on: x\n"},
		{Line: 25, YAML: "# a comment\non:\n  push:\n"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Workflows = %q\nwant %q", got, want)
	}
}

func TestParseWorkflow(t *testing.T) {
	w, err := ParseWorkflow(`on: push
env:
  A: "1"
jobs:
  scope:
    runs-on: ubuntu-latest
    steps:
      - run: echo
  test:
    needs: scope
    if: always()
    runs-on: ${{ matrix.runner }}
    timeout-minutes: 270
    strategy:
      matrix:
        runner: [r1, r2]
    env:
      TEST_LEVEL: "3"
    steps:
      - uses: actions/upload-artifact@v4
        with: {name: n, path: test-results/, overwrite: true}
      - id: q
        name: The queue
        timeout-minutes: 240
        continue-on-error: true
        uses: rocm/sgpu-queue@v1
        env:
          HF_TOKEN: ${{ secrets.HF_TOKEN }}
        with:
          pass-env: |
            HF_TOKEN
            NVTE_*
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 2 || w.Jobs[0].ID != "scope" || w.Env["A"] != "1" {
		t.Fatalf("%+v", w)
	}
	j, _ := w.Job("test")
	if !slices.Equal(j.Needs, []string{"scope"}) || j.If != "always()" || j.TimeoutMinutes != 270 || j.Env["TEST_LEVEL"] != "3" ||
		!slices.Equal(j.Matrix["runner"], []string{"r1", "r2"}) || len(j.Steps) != 2 {
		t.Errorf("job %+v", j)
	}
	up, q := j.Steps[0], j.Steps[1]
	if up.With["overwrite"] != "true" || up.With["name"] != "n" {
		t.Errorf("upload step %+v", up)
	}
	if q.ID != "q" || q.TimeoutMinutes != 240 || !q.ContinueOnError || q.Env["HF_TOKEN"] != "${{ secrets.HF_TOKEN }}" ||
		q.With["pass-env"] != "HF_TOKEN\nNVTE_*\n" || q.Line != 22 {
		t.Errorf("queue step %+v", q)
	}
	for _, bad := range []string{"jobs: [1]", "on: push\njobs:\n  a: 1\n", "jobs:\n  a:\n    steps:\n      - with: {x: [1]}\n", "[1"} {
		if _, err := ParseWorkflow(bad); err == nil {
			t.Errorf("ParseWorkflow(%q) took it", bad)
		}
	}
}
