package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// readConfig is phase 0: configs, target, GPU pool and the claimed log dir;
// release undoes what it opened.
func (r *run) readConfig(ctx context.Context) (suites []config.Suite, pool gpu.Pool, release func(), err error) {
	r.obs.Phase(0, "read the config")
	suites, err = r.o.Configs.Load()
	check := r.o.CheckCommands && r.o.Target.Container == ""
	var once error
	if check {
		once = r.checkOnce()
	}
	if err = errors.Join(err, config.Resolve(suites, r.o.Target.RepoRoot, check), adapter.Check(suites), r.readSharding(), once); err != nil {
		return nil, pool, nil, usage(err)
	}
	r.res.Configs = map[string]config.Suite{}
	for _, s := range suites {
		r.res.Configs[s.Label] = s
	}
	if suites, r.unselected, err = r.selectSuites(suites); err != nil {
		return nil, pool, nil, usage(err)
	}
	if len(suites) == 0 {
		return nil, pool, func() {}, nil // nothing selected: no GPU needed (run.noneSelected)
	}
	t, err := runenv.Open(ctx, r.o.Face, r.o.Target, r.warn, r.o.Target.RepoRoot, r.o.LogDir)
	if err != nil {
		return nil, pool, nil, usage(err)
	}
	release = func() { t.Close() }
	fail := func(err error) ([]config.Suite, gpu.Pool, func(), error) {
		release()
		return nil, pool, nil, usage(err)
	}
	r.target = t // where every command runs from here on, as one value
	if t.Root != "" {
		r.printf("  commands run in container %s (repo root there: %s)\n", r.o.Target.Container, t.Root)
	}
	for _, s := range suites {
		words := s.Args
		if s.Command != "" { // a script's line; a tool's has its arguments only
			words = append([]string{s.Command}, s.Args...)
		}
		queue := ""
		if s.MGPU {
			queue = "   mGPU queue"
		}
		r.printf("  %-12s %-6s %s   (%s)%s\n", s.Label, s.Mode, config.QuoteWords(words), s.Where(), queue)
	}
	if err = runenv.ApplyEnvScript(ctx, r.o.Face, r.o.Target, t, r.out, r.warn); err != nil {
		release()
		return nil, pool, nil, err
	}
	if pool, err = r.detect(ctx); err != nil {
		return fail(err)
	}
	if r.ports, err = r.itemPorts(pool); err != nil {
		return fail(err)
	}
	if err := r.prepareRerun(ctx, suites, pool.Arch); err != nil {
		release()
		return nil, pool, nil, err
	}
	r.printf("  level %s, log dir %s\n", r.o.Target.Level, r.o.LogDir)
	if !r.o.DryRun {
		if err := r.checkJUnit(labels(suites), true); err != nil {
			return fail(err)
		}
		claim := r.claim(suites, pool)
		lock, err := r.layout.Claim(claim, r.o.LogDirReuse)
		if err != nil {
			return fail(r.logDirError(err))
		}
		r.foreignCwd = claim.ForeignCwd
		release = func() { lock.Release(); t.Close() }
	}
	return suites, pool, release, nil
}

// itemPorts gives each GPU of the pool the PET_MASTER_PORT of an item that starts
// on it (docs/hooks.md "Ports").
func (r *run) itemPorts(pool gpu.Pool) (map[string]int, error) {
	fromEnv, _ := hook.Env(r.o.Target.Env).Get(hook.PortBaseVar)
	option := r.o.Face.Name("port-base")
	base, err := hook.PortBase(r.o.Target.PortBase, option, fromEnv)
	if err != nil {
		return nil, err
	}
	return hook.Ports(base, pool.IDs, option)
}

func (r *run) detect(ctx context.Context) (gpu.Pool, error) {
	pool, err := gpu.Detect(ctx, gpu.Options{Face: r.o.Face, Explicit: r.o.GPUs, Arch: r.o.Arch,
		PinVar: r.o.Target.Hooks.Pin, Env: r.target.Env, Exec: r.target.Exec})
	if err != nil {
		return pool, err
	}
	for _, w := range pool.Warnings {
		r.warn(w)
	}
	r.printf("  gpus: %s\n", pool.Describe())
	if pool.Arch == "" {
		pool.Arch = "unknown"
		r.warn(fmt.Sprintf("the GPU arch could not be detected; the weight table is keyed \"unknown\": "+
			"give %s (e.g. %s) to share weights with runs that know it",
			r.o.Face.Name("arch"), r.o.Face.Set("arch", "gfx942")))
	}
	return pool, nil
}

// claim is queue/run.json until phase 4 writes the rest: it marks the log dir as
// this tool's and names the suites whose files a next run may delete.
func (r *run) claim(suites []config.Suite, pool gpu.Pool) *record.Meta {
	m := &record.Meta{Tool: logdir.ToolName, GPUs: pool.IDs, PinVar: pool.PinVar, Arch: pool.Arch, Level: r.o.Target.Level,
		Shard: r.shardRecord(suites), Roots: r.roots(), ForeignCwd: r.foreignCwd, BaseTests: r.o.Presentation.BaseTests}
	for _, s := range suites {
		m.Suites = append(m.Suites, record.MetaSuite{Label: s.Label, LogFile: s.LogFile, Mode: string(s.Mode)})
	}
	for _, s := range r.unselected {
		m.Suites = append(m.Suites, record.MetaSuite{Label: s.Label, LogFile: s.LogFile, Mode: string(s.Mode), Skip: outcome.NotSelected})
	}
	return m
}

// roots are the repo root and, with a target container, its path there.
func (r *run) roots() []string {
	roots := []string{r.o.Target.RepoRoot}
	if p, err := r.target.Path(r.o.Target.RepoRoot); err == nil && p != r.o.Target.RepoRoot {
		roots = append(roots, p)
	}
	return roots
}

func labels(suites []config.Suite) []string {
	out := make([]string, len(suites))
	for i, s := range suites {
		out[i] = s.Label
	}
	return out
}

// logDirError is the one-line error, with its fix, of a log dir the run cannot
// claim.
func (r *run) logDirError(err error) error {
	face, dir := r.o.Face, r.o.LogDir
	var busy *logdir.BusyError
	var foreign *logdir.NotOursError
	var link *safefs.Error
	switch {
	case errors.As(err, &busy):
		busy.Face = face
		return err
	case errors.As(err, &foreign):
		foreign.Face = face
		return err
	case errors.As(err, &link) && errors.Is(link, syscall.ENOTDIR):
		// A file where the log dir's path needs a directory: not a hostile link, a
		// path that cannot be made.
		err = &fs.PathError{Op: "mkdir", Path: link.Path, Err: syscall.ENOTDIR}
	case errors.As(err, &link):
		return r.stateError(link)
	}
	return fmt.Errorf("log dir %s is not writable: %w; give a writable %s", dir, err, face.Name("log-dir"))
}
