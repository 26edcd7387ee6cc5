// Package runenv is where suite commands run (local processes, an executor, or
// --container) and what they start from. Run and verify take its Options whole.
package runenv

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/dockerexec"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Options say where and how suite commands run. Paths are as this process sees
// them.
type Options struct {
	RepoRoot string     // default: the current directory
	Env      []string   // the environment suites inherit; nil = os.Environ()
	Hooks    hook.Names // the hook contract's variable names; zero = TE's
	Level    string     // "" = $TEST_LEVEL, else 99
	// PortBase is the first of the items' PET_MASTER_PORT ports (--port-base):
	// "" = $TE_CI_PORT_BASE of Env, else 29600 (hook.PortBase).
	PortBase string

	// Exec runs every suite command; nil = local processes with Grace and Force.
	Exec executor.Executor
	// Grace is how long a stopped command gets between TERM and KILL (0 = none);
	// Force, closed, cuts it short.
	Grace time.Duration
	Force <-chan struct{}
	// MapPath turns a local path into the path where Exec runs commands.
	MapPath func(string) (string, error)
	// Container, when set, runs every suite command inside that running container;
	// ContainerWorkdir is the repo root there ("" = from the mounts); PassEnv names
	// the variables of Env that go in besides the hook contract's.
	Container        string
	ContainerWorkdir string
	PassEnv          []string
	// CoreDumps keeps the core-file limit sgpu-queue was started with for the
	// commands it starts; false (the default) sets it to 0 (executor.NoCoreDumps).
	CoreDumps bool
	// EnvScript is a shell script run once, before anything else, whose exports
	// every command gets (docs/hooks.md "The environment of every command").
	EnvScript string
	// ListTimeout and SetupTimeout bound each listing pass (and the EnvScript) and
	// each suite's setup (0 = no deadline).
	ListTimeout  time.Duration
	SetupTimeout time.Duration
}

// usage is an error of the options: exit 2.
func usage(err error) error { return exitcode.New(exitcode.Usage, err) }

// Settle fills the options' defaults as run and verify both read them; a bad root
// or level is a usage error.
func Settle(face optname.Face, o *Options) error {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Hooks == (hook.Names{}) {
		o.Hooks = hook.Default()
	}
	if o.RepoRoot == "" {
		o.RepoRoot = "."
	}
	root, err := filepath.Abs(o.RepoRoot)
	if err != nil {
		return usage(fmt.Errorf("%s: %w", face.Given("repo-root", o.RepoRoot), err))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usage(fmt.Errorf("%s: not a directory; give the repository the config's commands are relative to",
			face.Given("repo-root", o.RepoRoot)))
	}
	o.RepoRoot = root
	if o.Level, err = o.SettledLevel(face); err != nil {
		return usage(err)
	}
	return nil
}

// SettledLevel is the level Settle settles: given, else the hook variable of Env.
func (o Options) SettledLevel(face optname.Face) (string, error) {
	fromEnv, _ := hook.Env(o.Env).Get(o.Hooks.Level)
	level, err := Level(o.Level, fromEnv)
	if err != nil {
		return level, fmt.Errorf("%s %q: %w", face.Name("level"), level, err)
	}
	return level, nil
}

// Level is the test level: given, else fromEnv, else 99 (docs/hooks.md, The level).
// The error says why it cannot key a weight table.
func Level(given, fromEnv string) (string, error) {
	level := strings.TrimSpace(given)
	if level == "" {
		level = strings.TrimSpace(fromEnv)
	}
	if level == "" {
		level = "99"
	}
	return level, weights.CheckLevel(level)
}

// Target is where suite commands run, settled and opened; listing and dispatch take
// it whole.
type Target struct {
	Exec executor.Executor
	// Hooks, Level and RepoRoot are the settled Options' (RepoRoot as this process
	// sees it).
	Hooks    hook.Names
	Level    string
	RepoRoot string
	// Env is the environment suite commands start from; in a container its own plus
	// --pass-env, as this process's PATH or HOME would break the test image.
	Env hook.Env
	// MapPath turns a local path into the path where commands run (nil: the same).
	MapPath func(string) (string, error)
	// Local: commands are this process's children (executor.Local).
	Local bool
	// Root is the repo root as seen in the container ("" when not in one).
	Root  string
	close func()
}

// Path is local path p where commands run (MapPath); the same path without a
// target (a merge) or a MapPath.
func (t *Target) Path(p string) (string, error) {
	if t == nil || t.MapPath == nil {
		return p, nil
	}
	return t.MapPath(p)
}

// Close releases the connection to the container, if any.
func (t *Target) Close() {
	if t.close != nil {
		t.close()
	}
}

// Open opens where o's suite commands run, for run and verify alike; every path in
// paths must be visible there. o must be settled (Settle).
func Open(ctx context.Context, face optname.Face, o Options, warn func(string), paths ...string) (*Target, error) {
	t, err := open(ctx, face, o, warn, paths)
	if err != nil {
		return nil, err
	}
	t.Hooks, t.Level, t.RepoRoot = o.Hooks, o.Level, o.RepoRoot
	return t, nil
}

func open(ctx context.Context, face optname.Face, o Options, warn func(string), paths []string) (*Target, error) {
	switch {
	case o.Container != "":
		return openContainer(ctx, face, o, warn, paths)
	case o.Exec != nil:
		return &Target{Exec: o.Exec, Env: o.Env, MapPath: o.MapPath}, nil
	}
	// Without a readable /proc only a command's process group is stopped.
	if err := executor.Tracking(); err != nil {
		warn(err.Error())
	}
	if !o.CoreDumps {
		if err := executor.NoCoreDumps(); err != nil {
			warn(err.Error())
		}
	}
	return &Target{Exec: executor.Local{Grace: o.Grace, Force: o.Force, Warn: warn}, Env: o.Env, MapPath: o.MapPath, Local: true}, nil
}

// openContainer points every suite command at another running container, paths
// translated through the two containers' mounts; it fails before anything runs when
// a path is on no mount both can see.
func openContainer(ctx context.Context, face optname.Face, o Options, warn func(string), paths []string) (*Target, error) {
	fail := func(err error) (*Target, error) {
		return nil, fmt.Errorf("%s: %w", face.Given("container", o.Container), err)
	}
	cli, err := dockerexec.NewClient()
	if err != nil {
		return fail(fmt.Errorf("cannot reach the Docker Engine API (DOCKER_HOST or /var/run/docker.sock): %w", err))
	}
	// This process's own container, for its mounts: from /proc first (HOSTNAME is
	// the host's name under some runner implementations, e.g. nektos/act).
	hostname, _ := hook.Env(o.Env).Get("HOSTNAME")
	self := dockerexec.FindSelf(os.ReadFile, hostname)
	m, err := dockerexec.DiscoverMapper(ctx, cli, self.ID, o.Container, o.RepoRoot, o.ContainerWorkdir)
	for _, p := range paths {
		if err == nil {
			_, err = m.ToTarget(p)
		}
	}
	if err != nil {
		cli.Close()
		return fail(err)
	}
	x, err := dockerexec.New(ctx, dockerexec.Options{Container: o.Container, Client: cli, Mapper: m, Grace: o.Grace, Force: o.Force,
		Warn: warn, NoCoreDumps: !o.CoreDumps})
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("%s: %w", face.Name("container"), err) // it names the container
	}
	root, _ := m.ToTarget(o.RepoRoot)
	return &Target{
		Exec: x, Env: hook.Env(x.ContainerEnv()).With(passEnv(o.Env, o.PassEnv)...), MapPath: m.ToTarget, Root: root,
		close: func() { x.Close(); cli.Close() },
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
