package engine

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/rocm/sgpu-queue/internal/dockerexec"
	"github.com/rocm/sgpu-queue/internal/hook"
)

// openContainer points the run at another container: every suite command (listing,
// setup, items, GPU detection) runs there through the Docker API, and every path the
// run shares with it (log dir, item working directories, JUnit prefix) is translated
// through the two containers' mounts. It fails, before anything runs, when the
// container is not running or the log dir is on no mount both can see.
func (r *run) openContainer(ctx context.Context) (func(), error) {
	cli, err := dockerexec.NewClient()
	if err != nil {
		return nil, fmt.Errorf("--container %s: cannot reach the Docker Engine API (DOCKER_HOST or /var/run/docker.sock): %v", r.o.Container, err)
	}
	self, _ := hook.Env(r.o.Env).Get("HOSTNAME")
	if self == "" {
		self, _ = os.Hostname()
	}
	m, err := dockerexec.DiscoverMapper(ctx, cli, self, r.o.Container, r.o.RepoRoot, r.o.ContainerWorkdir)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("--container %s: %v", r.o.Container, err)
	}
	x, err := dockerexec.New(ctx, dockerexec.Options{Container: r.o.Container, Client: cli, Mapper: m, Grace: r.o.Grace, Force: r.o.Force, Warn: r.warn})
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("--container: %v", err)
	}
	for _, p := range []string{r.o.RepoRoot, r.o.LogDir} {
		if _, err := m.ToTarget(p); err != nil {
			x.Close()
			cli.Close()
			return nil, fmt.Errorf("--container %s: %v", r.o.Container, err)
		}
	}
	r.o.Exec = x
	r.o.MapPath = m.ToTarget
	r.cmdEnv = hook.Env(x.ContainerEnv()).With(passEnv(r.o.Env, r.o.PassEnv)...)
	root, _ := m.ToTarget(r.o.RepoRoot)
	r.printf("  commands run in container %s (repo root there: %s)\n", r.o.Container, root)
	return func() {
		x.Close()
		cli.Close()
	}, nil
}

// passEnv picks the variables of env whose names match one of the patterns.
func passEnv(env []string, patterns []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}
