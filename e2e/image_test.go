package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
)

// goBase is the build stage's base, made from a local Go toolchain where no registry
// is reachable (.ci/run makes one when its machine can).
const goBase = "localhost/golang:local"

// The action's image builds from the Dockerfile, and the runner's way of running it
// (docker run with the workspace and the file-command directory mounted, INPUT_*
// variables) runs the demo queue to a green result with outputs and a summary.
func TestActionImage(t *testing.T) {
	t.Parallel()
	cli := dockertest.Engine(t)
	// Generous: the build compiles the module inside the image, and a busy 2-core
	// machine took more than 8 minutes for it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, goBase); err != nil {
		t.Skipf("GO BASE IMAGE MISSING (%v): tag a Go image as %s (docker pull golang:1.26-alpine && docker tag golang:1.26-alpine %s); the image job of .github/workflows/ci.yml builds the Dockerfile with the registry's golang image", err, goBase, goBase)
	}
	tag := actionImage(t, ctx, cli)

	ws := fixture(t, "demo")
	cmds := t.TempDir()
	os.WriteFile(filepath.Join(cmds, "output"), nil, 0o666)
	os.WriteFile(filepath.Join(cmds, "summary"), nil, 0o666)
	env := []string{
		"PATH=/github/workspace/bin:/bin", "GITHUB_WORKSPACE=/github/workspace",
		"GITHUB_OUTPUT=/github/file_commands/output", "GITHUB_STEP_SUMMARY=/github/file_commands/summary",
		"INPUT_CONFIG=ci/sgpu.conf", "INPUT_LEVEL=1", "INPUT_LOG-DIR=test-results/logs", "INPUT_PUBLISH=summary",
		"INPUT_GITHUB-TOKEN=" + token,
	}
	name := dockertest.UniqueName(t)
	_, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       name,
		Config:     &container.Config{Image: tag, Env: env, WorkingDir: "/github/workspace"},
		HostConfig: &container.HostConfig{Binds: []string{ws + ":/github/workspace", cmds + ":/github/file_commands"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), name, client.ContainerRemoveOptions{Force: true}) })
	if _, err := cli.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	wait := cli.ContainerWait(ctx, name, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	var code int64
	select {
	case r := <-wait.Result:
		code = r.StatusCode
	case err := <-wait.Error:
		t.Fatal(err)
	}
	logs := containerLogs(t, cli, name)
	if code != 0 {
		t.Fatalf("the action's container exited %d:\n%s", code, logs)
	}
	out := parseOutputs(t, filepath.Join(cmds, "output"))
	if out["result"] != "success" || out["junit-files"] == "" {
		t.Errorf("outputs %v\n%s", out, logs)
	}
	if !strings.Contains(logs, "4 GPUs [0 1 2 3] from rocminfo") || !strings.Contains(logs, "::group::Phase 4") {
		t.Errorf("log:\n%s", logs)
	}
	if s := readFile(t, filepath.Join(cmds, "summary")); !strings.Contains(s, "✓ sgpu-queue: 12 tests, none failed; all 14 items passed") {
		t.Errorf("summary:\n%.300s", s)
	}
}

// builtImage is the action's image built from this checkout, once per test binary:
// TestActionImage and TestActWorkflow share it (a cold build takes minutes on two
// cores), and TestMain removes it, with the image its build stage left (stage).
var builtImage struct {
	once  sync.Once
	tag   string
	stage string
}

// actionImage builds the action's image on the first call and returns its tag.
func actionImage(t *testing.T, ctx context.Context, cli *client.Client) string {
	t.Helper()
	builtImage.once.Do(func() {
		tag := "sgpu-queue:" + strings.TrimPrefix(dockertest.UniqueName(t), "sgpu-test-")
		builtImage.stage = build(t, ctx, cli, tag)
		builtImage.tag = tag
	})
	if builtImage.tag == "" {
		t.Fatal("the action's image did not build (see the first test that built it)")
	}
	return builtImage.tag
}

// removeBuiltImage removes the image actionImage built, with its build cache.
func removeBuiltImage() {
	if builtImage.tag == "" {
		return
	}
	if cli, err := client.New(client.FromEnv); err == nil {
		for _, id := range []string{builtImage.tag, builtImage.stage} {
			if id != "" {
				_, _ = cli.ImageRemove(context.Background(), id, client.ImageRemoveOptions{Force: true, PruneChildren: true})
			}
		}
		_ = cli.Close()
	}
}

// build sends the module's sources (what the Dockerfile copies) to the engine's
// build endpoint. It returns the untagged image the build stage ended with when
// this build made it ("" when it came from the cache: not this run's to remove):
// removing the tagged image leaves it, 500 MB a run.
func build(t *testing.T, ctx context.Context, cli *client.Client, tag string) (stage string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "e2e" || rel == "bench" || rel == "test-results") {
				return filepath.SkipDir
			}
			return nil
		}
		// The sources, and what they embed (//go:embed files beside them:
		// internal/adapter/pytest_probe.py).
		source := strings.HasSuffix(rel, ".go") || strings.HasPrefix(rel, "internal"+string(filepath.Separator))
		if !(rel == "Dockerfile" || rel == "go.mod" || rel == "go.sum" || source && !strings.HasSuffix(rel, "_test.go")) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	goImage, runtime := goBase, dockertest.Image
	started := time.Now().Add(-time.Second) // the engine's clock rounds
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, Dockerfile: "Dockerfile",
		BuildArgs: map[string]*string{"GO_IMAGE": &goImage, "RUNTIME_IMAGE": &runtime},
	})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	defer res.Body.Close()
	var log strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			log.WriteString(m.Stream)
			if m.Error != "" {
				t.Fatalf("build failed: %s\n%s", m.Error, log.String())
			}
		}
	}
	if _, err := cli.ImageInspect(ctx, tag); err != nil {
		t.Fatalf("no image after the build: %v\n%s", err, log.String())
	}
	if id := stageImage(log.String()); id != "" {
		img, err := cli.ImageInspect(ctx, id)
		if created, perr := time.Parse(time.RFC3339Nano, img.Created); err == nil && perr == nil && !created.Before(started) &&
			len(img.RepoTags) == 0 {
			return id
		}
	}
	return ""
}

// stageImage is the image id the classic builder's log gives the build stage's last
// step: the last " ---> <id>" before the step of the second FROM.
func stageImage(log string) string {
	var last string
	froms := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "Step ") && strings.Contains(l, " : FROM ") {
			if froms++; froms == 2 {
				return last
			}
		}
		if id, ok := strings.CutPrefix(strings.TrimSpace(l), "---> "); ok && !strings.Contains(id, " ") {
			last = id
		}
	}
	return ""
}

func containerLogs(t *testing.T, cli *client.Client, name string) string {
	t.Helper()
	r, err := cli.ContainerLogs(context.Background(), name, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	data, _ := io.ReadAll(r)
	// Strip the 8-byte stream headers of the multiplexed log.
	var out strings.Builder
	for len(data) >= 8 {
		n := int(data[4])<<24 | int(data[5])<<16 | int(data[6])<<8 | int(data[7])
		data = data[8:]
		if n > len(data) {
			n = len(data)
		}
		out.Write(data[:n])
		data = data[n:]
	}
	return out.String()
}
