package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
)

// actWorkflow is a workflow in the README's shape, run by nektos/act: the queue step
// with continue-on-error and the README's gate, the outputs read with fromJSON in
// the next step and in a downstream job, and a job whose failing item fails it with
// its annotation. Steps run in the busybox fixture image (sh, no bash).
const actWorkflow = `name: gpu-tests
on: push
defaults:
  run:
    shell: sh
jobs:
  test:
    runs-on: ubuntu-latest
    env:
      TEST_LEVEL: "1"
    outputs:
      suites: ${{ steps.queue.outputs.suites }}
      result: ${{ steps.queue.outputs.result }}
    steps:
      - uses: actions/checkout@v4
      - name: The GPU suites as one queue
        id: queue
        continue-on-error: true
        uses: ./
        env:
          PATH: ${{ github.workspace }}/bin:/bin
        with:
          config: ci/sgpu.conf
          log-dir: test-results/test
          publish: summary
      - name: Gate on every suite
        if: always() && steps.queue.outputs.result != 'success'
        env:
          FAILED: ${{ steps.queue.outputs.failed-suites }}
        run: |
          echo "failed suites: ${FAILED:-the queue did not run}"
          exit 1
      - name: Outputs in the next step
        env:
          TORCH_ITEMS: ${{ fromJSON(steps.queue.outputs.suites).torch.items }}
          CORE_RC: ${{ fromJSON(steps.queue.outputs.suites).core.rc }}
          JUNIT: ${{ steps.queue.outputs.junit-files }}
        run: |
          echo "next step: torch items $TORCH_ITEMS, core rc $CORE_RC"
          test "$TORCH_ITEMS" = 8 && test "$CORE_RC" = 0
          for f in $JUNIT; do test -s "$f"; done
  downstream:
    needs: test
    runs-on: ubuntu-latest
    steps:
      - name: Outputs in a downstream job
        env:
          RESULT: ${{ needs.test.outputs.result }}
          JAX_RC: ${{ fromJSON(needs.test.outputs.suites).jax.rc }}
        run: |
          echo "downstream: result $RESULT, jax rc $JAX_RC"
          test "$RESULT" = success && test "$JAX_RC" = 0
  failing:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./
        with:
          config: ci/broken.conf
          log-dir: test-results/failing
          gpus: "2"
          arch: gfx942
  inside:
    runs-on: ubuntu-latest
    env:
      TEST_LEVEL: "1"
    steps:
      - uses: actions/checkout@v4
      - name: The suites inside a container an earlier step started
        id: queue
        uses: ./
        with:
          config: ci/sgpu.conf
          container: ${{ vars.TARGET }}
          log-dir: test-results/inside
          weights: ci-weights/inside.txt
      - name: It ran there
        env:
          RESULT: ${{ steps.queue.outputs.result }}
        run: test "$RESULT" = success
`

// actEvent is one line of act --json: a log line of a job, a step's or a job's
// result, or a workflow command the action printed.
type actEvent struct {
	JobID      string            `json:"jobID"`
	Msg        string            `json:"msg"`
	StepResult string            `json:"stepResult"`
	JobResult  string            `json:"jobResult"`
	Command    string            `json:"command"`
	Arg        string            `json:"arg"`
	KV         map[string]string `json:"kvPairs"`
}

// nektos/act (an independent runner that checks action.yml against the runner's
// schema) runs the shipped action.yml, only runs.image pointed at the image built
// from this checkout, on the demo suites with fake GPUs; in job inside, with the
// container input, where act gives the action the host's name, not its container's
// (the workspace is bind-mounted, --bind, so a target container can share it).
func TestActWorkflow(t *testing.T) {
	t.Parallel()
	act := actBinary(t)
	cli := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // as TestActionImage: whichever asks first builds the image
	defer cancel()
	if _, err := cli.ImageInspect(ctx, goBase); err != nil {
		t.Skipf("GO BASE IMAGE MISSING (%v): the act test builds the action's image on %s (.ci/run makes it)", err, goBase)
	}
	tag := actionImage(t, ctx, cli)
	ws := actWorkspace(t, tag)
	target := dockertest.Start(t, cli, []string{ws + ":/workspace"}, []string{"PATH=/workspace/bin:/bin"}, true)

	cmd := exec.CommandContext(ctx, act, "push", "--json", "-P", "ubuntu-latest="+dockertest.Image,
		"--pull=false", "--action-offline-mode", "--bind", "--var", "TARGET="+target,
		"--rm") // the failing job's container and volume would otherwise stay, running, after the test
	cmd.Dir = ws
	// act reads ~/.actrc and keeps its caches under HOME: a fresh one asks nothing.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("act: %v (want exit 1: the failing job fails)\n%s", err, out)
	}
	events := parseActEvents(t, out)
	jobs, logs := map[string]string{}, map[string]*strings.Builder{}
	var annotations []actEvent
	for _, e := range events {
		if e.JobResult != "" {
			jobs[e.JobID] = e.JobResult
		}
		if logs[e.JobID] == nil {
			logs[e.JobID] = &strings.Builder{}
		}
		logs[e.JobID].WriteString(e.Msg + "\n")
		if e.Command == "error" {
			annotations = append(annotations, e)
		}
	}
	if jobs["test"] != "success" || jobs["downstream"] != "success" || jobs["inside"] != "success" || jobs["failing"] != "failure" {
		t.Fatalf("job results %v, want test, downstream and inside success, failing failure\n%s", jobs, actLog(logs))
	}
	checks := []struct{ job, want string }{
		{"test", "4 GPUs [0 1 2 3] from rocminfo"},
		{"test", "next step: torch items 8, core rc 0"},
		{"downstream", "downstream: result success, jax rc 0"},
		{"inside", "commands run in container " + target + " (repo root there: /workspace)"},
		{"inside", "4 GPUs [0 1 2 3] from rocminfo"},
	}
	for _, c := range checks {
		if !strings.Contains(logs[c.job].String(), c.want) {
			t.Errorf("job %s: no %q in its log:\n%s", c.job, c.want, logs[c.job])
		}
	}
	// One error per failed test, at its file and line (its item's is then said by it).
	if len(annotations) != 1 || annotations[0].JobID != "failing" || annotations[0].KV["title"] != "tests/test_broken.py::test_one" ||
		annotations[0].KV["file"] != "tests/test_broken.py" || annotations[0].KV["line"] != "2" ||
		!strings.Contains(annotations[0].Arg, "AssertionError: 1 != 2") {
		t.Errorf("error annotations %+v, want one of the failing job: test_one at tests/test_broken.py:2", annotations)
	}
}

// actBinary is the act of PATH or GOPATH/bin (.ci/run installs it), or the test
// skips loudly.
func actBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("act"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "act")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("NEKTOS/ACT NOT INSTALLED: the action is not run by a runner implementation; " +
		"go install github.com/nektos/act@v0.2.89 (.ci/run does)")
	return ""
}

// actWorkspace is a repository holding the demo suites, a suite whose item fails,
// the workflow, and action.yml as shipped but for runs.image.
func actWorkspace(t *testing.T, tag string) string {
	t.Helper()
	ws := fixture(t, "demo")
	manifest := readFile(t, filepath.Join("..", "action.yml"))
	image := regexp.MustCompile(`(?m)^  image: .*$`)
	if n := len(image.FindAllString(manifest, -1)); n != 1 {
		t.Fatalf("action.yml has %d runs.image lines, want 1", n)
	}
	files := map[string]string{
		"action.yml":                image.ReplaceAllLiteralString(manifest, "  image: docker://"+tag),
		".github/workflows/gpu.yml": actWorkflow,
		"ci/broken.conf":            "broken broken.log opaque ci/broken.sh\n",
		// Its failed test, in pytest's xunit1 JUnit, at a file of the checkout.
		"ci/broken.sh": "#!/bin/sh\necho 'broken: AssertionError: 1 != 2'\nmkdir -p \"$JUNITXML_PREFIX\"\n" +
			"echo '<testsuite><testcase classname=\"tests.test_broken\" name=\"test_one\" file=\"tests/test_broken.py\" line=\"2\">" +
			"<failure message=\"AssertionError: 1 != 2\"/></testcase></testsuite>' >\"${JUNITXML_PREFIX}broken.xml\"\nexit 1\n",
		"tests/test_broken.py": "def test_one():\n    assert 1 == 2\n",
	}
	for name, body := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// act reads the commit and ref from git; without a repository it still runs,
	// with an error line per step.
	if git, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
			{"-c", "user.name=e2e", "-c", "user.email=e2e@local", "commit", "-qm", "demo"}} {
			if out, err := exec.Command(git, append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return ws
}

func parseActEvents(t *testing.T, out []byte) []actEvent {
	t.Helper()
	var events []actEvent
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var e actEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		t.Fatalf("act printed no JSON lines:\n%s", out)
	}
	return events
}

func actLog(logs map[string]*strings.Builder) string {
	var b strings.Builder
	for job, l := range logs {
		b.WriteString("== " + job + "\n" + l.String())
	}
	return b.String()
}
