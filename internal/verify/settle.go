package verify

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/dockerexec"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
)

// settle gives the repo root and the level the meaning a run gives them: the root
// absolute and a directory, the level --level, else $TEST_LEVEL, else 99.
func settle(o *Options) error {
	if o.RepoRoot == "" {
		o.RepoRoot = "."
	}
	root, err := filepath.Abs(o.RepoRoot)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(root); err == nil && !fi.IsDir() {
			err = fmt.Errorf("not a directory")
		}
	}
	if err != nil {
		return fmt.Errorf("--repo-root %s: %v; give the repository the config's commands are relative to", o.RepoRoot, err)
	}
	o.RepoRoot = root
	if o.Level == "" {
		o.Level, _ = hook.Env(o.Env).Get(o.Hooks.Level)
	}
	if o.Level == "" {
		o.Level = "99"
	}
	if strings.ContainsAny(o.Level, "/ \t\n") || strings.HasPrefix(o.Level, ".") {
		return fmt.Errorf("--level %q: want a test level such as 1, 2 or 3", o.Level)
	}
	return nil
}

// attach points the listings at another running container through the Docker
// Engine API, as a run's --container does: the repo root is found there from the two
// containers' mounts, and commands start from the container's own environment plus
// the --pass-env variables.
func attach(ctx context.Context, o *Options) (executor.Executor, hook.Env, func(), error) {
	fail := func(err error) (executor.Executor, hook.Env, func(), error) {
		return nil, nil, nil, fmt.Errorf("--container %s: %w", o.Container, err)
	}
	cli, err := dockerexec.NewClient()
	if err != nil {
		return fail(fmt.Errorf("cannot reach the Docker Engine API (DOCKER_HOST or /var/run/docker.sock): %w", err))
	}
	self, _ := hook.Env(o.Env).Get("HOSTNAME")
	if self == "" {
		self, _ = os.Hostname()
	}
	m, err := dockerexec.DiscoverMapper(ctx, cli, self, o.Container, o.RepoRoot, o.ContainerWorkdir)
	if err == nil {
		_, err = m.ToTarget(o.RepoRoot)
	}
	if err != nil {
		cli.Close()
		return fail(err)
	}
	x, err := dockerexec.New(ctx, dockerexec.Options{Container: o.Container, Client: cli, Mapper: m, Grace: o.Grace, Force: o.Force})
	if err != nil {
		cli.Close()
		return fail(err)
	}
	var pass []string
	for _, kv := range o.Env {
		name, _, _ := strings.Cut(kv, "=")
		for _, p := range o.PassEnv {
			if ok, _ := path.Match(p, name); ok {
				pass = append(pass, kv)
				break
			}
		}
	}
	return x, hook.Env(x.ContainerEnv()).With(pass...), func() { x.Close(); cli.Close() }, nil
}
