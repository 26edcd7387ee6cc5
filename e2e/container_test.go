package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/dockerexec"
	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

// containerFixture copies the container suites and the demo's fake rocminfo into a
// workspace and starts a fixture container with it bind-mounted at /workspace, the
// fake on its PATH: GPU detection, listing, setup and items all run in there.
func containerFixture(t *testing.T) (dir, name string, cli *client.Client) {
	t.Helper()
	cli = dockertest.Engine(t)
	dir = fixture(t, "container")
	demo := fixture(t, "demo")
	if err := os.Rename(filepath.Join(demo, "bin"), filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	name = dockertest.Start(t, cli, []string{dir + ":/workspace"}, []string{"PATH=/workspace/bin:/bin", "IN_IMAGE=yes"}, true)
	return dir, name, cli
}

func TestContainerQueue(t *testing.T) {
	t.Parallel()
	dir, name, _ := containerFixture(t)
	env := []string{"MY_PASSED=yes", "HOST_ONLY=1", "JUNITXML_PREFIX=test-results/junit/"}
	r := sgpu(t, dir, env, "run", "--container", name, "--pass-env", "MY_*", "--grace", "2s", "box.conf")
	if r.code != 139 {
		t.Fatalf("exit %d, want 139 (the crash)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"commands run in container " + name + " (repo root there: /workspace)",
		"4 GPUs [0 1 2 3] from rocminfo", "arch gfx942",
		"FAIL rc=139 box crash (cut off)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	logs := filepath.Join(dir, "test-results", "logs")
	envLog := readFile(t, filepath.Join(logs, "items", "box.env.log"))
	if !strings.Contains(envLog, "MY_PASSED=yes") || strings.Contains(envLog, "HOST_ONLY") || !strings.Contains(envLog, "IN_IMAGE=yes") ||
		!strings.Contains(envLog, "JUNITXML_PREFIX=/workspace/test-results/junit/box/") || !strings.Contains(envLog, "in /workspace/test-results/logs/cwd/box.env") {
		t.Errorf("the item's environment inside the container:\n%s", envLog)
	}
	if rc := readFile(t, filepath.Join(logs, "items", "box.env.log.rc")); rc != "0\n" {
		t.Errorf("env item rc %q", rc)
	}
	// JUnit written inside the container is merged on this side.
	if _, err := os.Stat(filepath.Join(dir, "test-results", "junit", "box", "ok.one.xml")); err != nil {
		t.Errorf("the item's JUnit is not visible here: %v", err)
	}
	box := readFile(t, filepath.Join(dir, "test-results", "junit", "box.xml"))
	if !strings.Contains(box, "item crash of suite box: cut off (a .partial sidecar outlived it)") {
		t.Errorf("merged JUnit:\n%s", box)
	}
	validateJUnit(t, filepath.Join(dir, "test-results", "junit", "box.xml"))
	// The repo root as the suites saw it: the report shows paths under it relative.
	var meta struct {
		Roots []string `json:"roots"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(logs, "queue", "run.json"))), &meta); err != nil ||
		len(meta.Roots) != 2 || meta.Roots[1] != "/workspace" {
		t.Errorf("run.json roots %q (%v), want the repo root here and /workspace", meta.Roots, err)
	}
}

// startRun starts the binary in the background and waits until an item's log
// exists, i.e. the run is in phase 4 with that item running.
func startRun(t *testing.T, dir string, env []string, waitFor string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "DOCKER_HOST=" + os.Getenv("DOCKER_HOST")}, env...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(waitFor); err == nil {
			return cmd, out
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s never appeared:\n%s", waitFor, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog waits, with a generous bound, until an item's log holds what the item
// prints before it sleeps: then a signal meets it running, however busy the machine.
func waitLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said %q", path, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits for the run with a bound: a run that hangs fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(within):
		cmd.Process.Kill()
		t.Fatalf("the run did not end within %s", within)
		return -1
	}
}

// A cancel reaches the item's processes inside the other container.
func TestContainerCancel(t *testing.T) {
	dir, name, cli := containerFixture(t)
	sleeper := filepath.Join(dir, "test-results", "logs", "items", "box.sleeper.log")
	cmd, out := startRun(t, dir, []string{"WITH_SLEEPER=1"}, sleeper,
		"run", "--container", name, "--pass-env", "WITH_SLEEPER", "--gpus", "2", "--grace", "2s", "box.conf")
	waitLog(t, sleeper, "item sleeper on GPU") // its sleep starts next
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 60*time.Second); code == 0 {
		t.Errorf("exit 0 after a cancel\n%s", out.String())
	}
	if v := readFile(t, filepath.Join(dir, "test-results", "logs", "suites", "box.log")); !strings.Contains(v, "items/box.sleeper.log (cancelled)") {
		t.Errorf("verdict:\n%s\n%s", v, out.String())
	}
	ps := psIn(t, cli, name)
	if strings.Contains(ps, "sleep 120") {
		t.Errorf("the item still runs in the container after the cancel:\n%s", ps)
	}
}

// A container that dies mid-run ends the run promptly with a clear error, and every
// unfinished item is marked.
func TestContainerKilledMidRun(t *testing.T) {
	dir, name, cli := containerFixture(t)
	sleeper := filepath.Join(dir, "test-results", "logs", "items", "box.sleeper.log")
	cmd, out := startRun(t, dir, []string{"WITH_SLEEPER=1"}, sleeper,
		"run", "--container", name, "--pass-env", "WITH_SLEEPER", "--gpus", "1", "--grace", "2s", "box.conf")
	waitLog(t, sleeper, "item sleeper on GPU")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.ContainerKill(ctx, name, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 90*time.Second); code == 0 {
		t.Errorf("exit 0 after the container died\n%s", out.String())
	}
	if !strings.Contains(out.String(), "not running") && !strings.Contains(out.String(), "stopped") {
		t.Errorf("no clear error:\n%s", out.String())
	}
	v := readFile(t, filepath.Join(dir, "test-results", "logs", "suites", "box.log"))
	if !strings.Contains(v, "FAIL rc=137 items/box.sleeper.log (unavailable: where it ran went away)") {
		t.Errorf("verdict:\n%s\n%s", v, out.String())
	}
}

// psIn lists the processes of a container (through an exec of the API, so it works
// on podman's service too).
func psIn(t *testing.T, cli *client.Client, name string) string {
	t.Helper()
	x, err := dockerexec.New(context.Background(), dockerexec.Options{Container: name, Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := x.Run(context.Background(), executor.Command{Path: "ps", Args: []string{"-o", "pid,args"}, Dir: "/", Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A multi-GPU item in the other container: pinned to its GPUs with its suite's
// switch, and a cancel reaches it there.
func TestContainerBlockCancel(t *testing.T) {
	dir, name, cli := containerFixture(t)
	logs := filepath.Join(dir, "test-results", "logs")
	cmd, out := startRun(t, dir, []string{"WITH_SLEEPER=1", "MY_PASSED=yes"}, filepath.Join(logs, "items", "pair.sleeper.log"),
		"run", "--container", name, "--pass-env", "MY_*", "--pass-env", "WITH_SLEEPER", "--grace", "2s", "pair.conf")
	waitLog(t, filepath.Join(logs, "items", "pair.sleeper.log"), "item sleeper on GPU") // its sleep starts next
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 60*time.Second); code == 0 {
		t.Errorf("exit 0 after a cancel\n%s", out.String())
	}
	envLog := readFile(t, filepath.Join(logs, "items", "pair.env.log"))
	pin := regexp.MustCompile(`(?m)^HIP_VISIBLE_DEVICES=([0-3]),([0-3])$`).FindStringSubmatch(envLog)
	if pin == nil || pin[1] == pin[2] || !strings.Contains(envLog, "\nTEST_MGPU=1\n") || !strings.Contains(envLog, "\nTEST_SGPU=\n") {
		t.Errorf("the 2-GPU item's environment inside the container:\n%s", envLog)
	}
	if v := readFile(t, filepath.Join(logs, "suites", "pair.log")); !strings.Contains(v, "items/pair.sleeper.log (cancelled)") {
		t.Errorf("verdict:\n%s\n%s", v, out.String())
	}
	if !regexp.MustCompile(`(?m)^pair\tsleeper\t[0-3],[0-3]\t`).MatchString(readFile(t, filepath.Join(logs, "queue", "timings.tsv"))) {
		t.Errorf("timings.tsv has no 2-GPU row of the cancelled item")
	}
	if ps := psIn(t, cli, name); strings.Contains(ps, "sleep 120") {
		t.Errorf("the item still runs in the container after the cancel:\n%s", ps)
	}
}

// A cmd suite inside the container (the fixture image has a shell but no python or
// cmake, so the pytest and ctest adapters cannot run there): its setup= and its
// listing run in the container before its items, each item runs from the repo root
// as the container sees it, pinned, and its JUnit path is the container's, in a
// folder made for a tag that is a path.
func TestContainerCmdAdapter(t *testing.T) {
	t.Parallel()
	dir, name, _ := containerFixture(t)
	writeConf(t, dir, "ci/box.cmds.in", `where    echo "in $PWD gpu $HIP_VISIBLE_DEVICES image $IN_IMAGE"
junit    printf '<testsuite name="b" tests="1"><testcase classname="b" name="in-container"/></testsuite>\n' > "$SGPU_JUNIT_XML"
deep/er  echo "junit at $SGPU_JUNIT_XML"; echo '<testsuite name="b" tests="0"/>' > "$SGPU_JUNIT_XML"
`)
	conf := writeConf(t, dir, "adapters.conf", `boxcmd boxcmd.log 'cmd,setup=cp ci/box.cmds.in ci/box.cmds && echo "$IN_IMAGE" > built' ci/box.cmds`+"\n")
	r := sgpu(t, dir, []string{"JUNITXML_PREFIX=test-results/junit/"}, "run", "--container", name, "--grace", "2s", conf)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if built := readFile(t, filepath.Join(dir, "built")); built != "yes\n" {
		t.Errorf("setup= did not run in the container: built = %q", built)
	}
	items := filepath.Join(dir, "test-results", "logs", "items")
	if log := readFile(t, filepath.Join(items, "boxcmd.where.log")); !regexp.MustCompile(`^in /workspace gpu [0-3] image yes\n$`).MatchString(log) {
		t.Errorf("the item's place, GPU and environment in the container: %q", log)
	}
	if log := readFile(t, filepath.Join(items, logdir.ItemFileName("boxcmd", "deep/er", 0, false))); log != "junit at /workspace/test-results/junit/boxcmd/deep/er.xml\n" {
		t.Errorf("the JUnit path given in the container: %q", log)
	}
	merged := filepath.Join(dir, "test-results", "junit", "boxcmd.xml")
	if xml := readFile(t, merged); !strings.Contains(xml, `name="in-container"`) {
		t.Errorf("JUnit written in the container not merged:\n%s", xml)
	}
	validateJUnit(t, merged)
}
