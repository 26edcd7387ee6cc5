package adapter

import (
	"context"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
)

// listSuite is `<label> <logfile> list <script> [args…]`, speaking the hook contract (docs/hooks.md).
type listSuite struct {
	s config.Suite
}

// List is the queue pass: one item per "<marker> <tag>" line; a bad GPU count refuses the suite.
func (l listSuite) List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	out, tail, err := ListPass(ctx, ex, in, l.s, Pass{Census: in.Hook.Census})
	if err != nil {
		return nil, err
	}
	marker := in.Hook.Names.ItemMarker
	got, warns := ParseListing(out, marker)
	if len(got) == 0 {
		return nil, NoItems(in.Hook, l.s, tail)
	}
	items := make([]Item, 0, len(got))
	for _, g := range got {
		if err := g.Err(l.s, marker); err != nil {
			return nil, err
		}
		items = append(items, Item{Tag: g.Tag, GPUs: g.GPUs, AllGPUs: g.All})
	}
	return &Listed{Items: items, Warnings: warns}, nil
}

// Census is the census pass: every item at this level, probes answered "supported".
func (l listSuite) Census(ctx context.Context, ex executor.Executor, in Listing) ([]string, error) {
	out, _, err := ListPass(ctx, ex, in, l.s, Pass{Census: true})
	if err != nil {
		return nil, err
	}
	got, _ := ParseListing(out, in.Hook.Names.ItemMarker)
	return Tags(got), nil
}

// Selects re-enters the listing with the item's filter (docs/hooks.md, "verify"); repeats are kept, as
// they would run twice.
func (l listSuite) Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error) {
	out, _, err := ListPass(ctx, ex, in, l.s, Pass{Census: in.Hook.Census, Tag: it.Tag})
	if err != nil {
		return nil, err
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if t, ok := ItemTag(line, in.Hook.Names.ItemMarker); ok && t != "" {
			got = append(got, t)
		}
	}
	return got, nil
}

// Command re-enters the script with the item's filter and, on a re-run, the only-tests file.
func (l listSuite) Command(it Item, run Run) executor.Command {
	return hookCommand(l.s, it.Tag, false, run)
}

// TestIDs reads the item's JUnit as pytest node ids (docs/reruns.md); a case with no node id still counts.
func (listSuite) TestIDs(_ Item, path string) ([]string, int, error) {
	cases, total, err := junit.FailedCases(path)
	if err != nil {
		return nil, 0, err // no count: the item re-runs whole
	}
	var ids []string
	for _, c := range cases {
		if err := notALine(c); err != nil {
			return nil, total, err
		}
		id, ok := junit.PytestNodeID(c)
		if !ok {
			return nil, total, nil
		}
		ids = append(ids, id)
	}
	return ids, total, nil
}

// SetupCommand is the script with the setup switch, from the repo root, pinned to the suite's first GPUs.
func (l listSuite) SetupCommand(run Run) executor.Command {
	h := run.Hook
	env := h.Names.SetupEnv(l.s.Environ(h.Base), h.Level, l.s.GPUKind()).With(h.Pin...)
	return executor.Command{Path: l.s.Path, Args: l.s.Args, Env: junitVars(env, run), Dir: run.Dir, Stdout: run.Stdout, Stderr: run.Stderr}
}

// hookCommand is a hook-contract item's command: its script in the item's directory with the contract's environment.
func hookCommand(s config.Suite, tag string, opaque bool, run Run) executor.Command {
	h := run.Hook
	env := h.Names.ItemEnv(s.Environ(h.Base), h.Level, s.GPUKind(), tag, opaque).With(h.Pin...)
	// As TE's run_queue.sh does: an outer only-tests value must not narrow a full run.
	if h.Names.OnlyTests != "" && (run.Narrowed || !opaque) {
		env = env.With(h.Names.OnlyTests + "=" + run.OnlyFile)
	}
	return executor.Command{Path: s.Path, Args: s.Args, Env: junitVars(env, run), Dir: run.Cwd, Stdout: run.Stdout, Stderr: run.Stderr}
}

// junitVars sets the contract's JUnit prefix to the suite's folder, and the suffix with it.
func junitVars(env hook.Env, run Run) hook.Env {
	if run.JUnitDir == "" {
		return env
	}
	names := run.Hook.Names
	env = env.With(names.JUnitPrefix + "=" + run.JUnitDir)
	if run.JUnitSuffix != "" {
		// TE's scripts write <prefix><tag><suffix> and add no extension of their own.
		env = env.With(names.JUnitSuffix + "=" + run.JUnitSuffix)
	}
	return env
}

// notALine is the *NotALineError of a case whose id would hold a newline, CR or tab; nil otherwise.
func notALine(c junit.Case) error {
	if strings.ContainsAny(c.File+c.Classname+c.Name, "\n\r\t") {
		return &NotALineError{Name: c.Name}
	}
	return nil
}
