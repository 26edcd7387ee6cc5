package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// The once-per-run commands (docs/hooks.md "Once per run") are the run's, not a
// suite's, so they come as --before/--after, not config lines.

// onceKind names a once-per-run command in messages and in its log's name.
type onceKind string

const (
	onceBefore onceKind = "before"
	onceAfter  onceKind = "after"
)

// onceError is a before command that failed: the run stops as on a failed setup.
type onceError struct {
	err  error
	tail string
}

func (e *onceError) Error() string { return e.err.Error() }
func (e *onceError) Unwrap() error { return e.err }

// onceCommand is the command of --before or --after as the executor runs it: paths
// from the repo root, as a config's commands, bare names on PATH where it runs.
func (r *run) onceCommand(kind onceKind, words []string, pool gpu.Pool, w io.Writer) executor.Command {
	path := words[0]
	if strings.Contains(path, "/") && !filepath.IsAbs(path) {
		path = filepath.Join(r.o.Target.RepoRoot, path)
	}
	env := r.o.Target.Hooks.AdapterEnv(r.target.Env, r.o.Target.Level).With(pool.Pin(pool.IDs[0])...)
	return executor.Command{
		Name: fmt.Sprintf("%s command", kind), Path: path, Args: words[1:],
		Env: env, Dir: r.o.Target.RepoRoot, Stdout: w, Stderr: w,
	}
}

// checkOnce finds the programs of --before and --after before anything runs: a
// missing --after would otherwise be found only after the whole queue. Not in a
// --container, whose files this machine cannot see.
func (r *run) checkOnce() error {
	var errs []error
	for _, c := range []struct {
		kind  onceKind
		words []string
	}{{onceBefore, r.o.Once.Before}, {onceAfter, r.o.Once.After}} {
		if len(c.words) == 0 {
			continue
		}
		if err := onceProgram(r.o.Target.RepoRoot, c.words[0]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.o.Face.Given(string(c.kind), config.QuoteWords(c.words)), err))
		}
	}
	return errors.Join(errs...)
}

// onceProgram says what is wrong with the program of a once-per-run command as
// onceCommand runs it.
func onceProgram(root, prog string) error {
	show := config.QuoteWords([]string{prog})
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("%s is not on PATH; give its path (a relative one is taken from the repo root)", show)
		}
		return nil
	}
	p := prog
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("%s not found (looked for %s; a relative program is taken from the repo root)", show, p)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory; name the program to run", show)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable: chmod +x %s", show, config.QuoteWords([]string{p}))
	}
	return nil
}

// runOnce runs a once-per-run command with the setup deadline; its error names the
// command, the log and its output's tail.
func (r *run) runOnce(ctx context.Context, kind onceKind, words []string, pool gpu.Pool) (tail string, err error) {
	path := r.layout.OnceLog(string(kind))
	f, err := r.layout.Create(path)
	if err != nil {
		return "", r.pathError(path, err)
	}
	defer f.Close()
	t := &textfmt.Tail{}
	console := &textfmt.Prefixer{W: r.out, Prefix: "    | "}
	defer console.Flush()
	sctx, cancel := executor.Deadline(ctx, r.o.Target.SetupTimeout, errSetupDeadline)
	defer cancel()
	res, err := r.target.Exec.Run(sctx, r.onceCommand(kind, words, pool, io.MultiWriter(f, t, console)))
	what := fmt.Sprintf("%s %s", r.o.Face.Name(string(kind)), config.QuoteWords(words))
	switch {
	case err != nil:
		return "", fmt.Errorf("%s could not run: %w", what, err)
	case res.Cancelled && executor.PastDeadline(ctx, sctx, errSetupDeadline):
		return t.String(), fmt.Errorf("%s did not end within %s (%s) and was stopped; log %s", what, r.o.Target.SetupTimeout,
			r.o.Face.Name("setup-timeout"), r.rel(path))
	case res.Cancelled || ctx.Err() != nil:
		return t.String(), fmt.Errorf("%s cancelled: %w", what, context.Canceled)
	case res.ExitCode != 0:
		return t.String(), fmt.Errorf("%s exited with %d; log %s", what, res.ExitCode, r.rel(path))
	}
	return t.String(), nil
}

// before runs --before once, ahead of the setups, when items run; its failure stops
// the run.
func (r *run) before(ctx context.Context, pool gpu.Pool, items int) error {
	if len(r.o.Once.Before) == 0 {
		return nil
	}
	if items == 0 {
		r.printf("  no item to run: %s is not run\n", r.o.Face.Name("before"))
		return nil
	}
	r.printf("  %s: %s  → %s\n", r.o.Face.Name("before"), config.QuoteWords(r.o.Once.Before), r.rel(r.layout.OnceLog(string(onceBefore))))
	tail, err := r.runOnce(ctx, onceBefore, r.o.Once.Before, pool)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		if tail != "" {
			err = fmt.Errorf("%w:\n%s", err, textfmt.Indent(tail))
		}
		return &onceError{err: err, tail: tail}
	}
	r.printf("  %s ok\n", r.o.Face.Name("before"))
	return nil
}

// after runs --after once the queue has drained, not after a cancel; its failure is
// a warning, never the verdict.
func (r *run) after(ctx context.Context, pool gpu.Pool, items int) {
	if len(r.o.Once.After) == 0 || items == 0 || ctx.Err() != nil {
		return
	}
	r.printf("  %s: %s  → %s\n", r.o.Face.Name("after"), config.QuoteWords(r.o.Once.After), r.rel(r.layout.OnceLog(string(onceAfter))))
	if _, err := r.runOnce(ctx, onceAfter, r.o.Once.After, pool); err != nil {
		r.warn(err.Error() + " (the verdicts are the items'; this is only a warning)")
	}
}

func onceStop(err error) *record.Stop {
	var oe *onceError
	if !errors.As(err, &oe) {
		return nil
	}
	return &record.Stop{Reason: outcome.StopBeforeFailed, Phase: 3, Message: stopMessage(oe.Error(), oe.tail)}
}

// SetupEnvProblems are the --setup-env entries refused: not NAME=VALUE, or a
// variable the tool sets itself (hook.Names.Uses), which would win over the value.
func SetupEnvProblems(n hook.Names, env []string) []error {
	var errs []error
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !hook.ValidName(name) {
			errs = append(errs, fmt.Errorf("%q: want NAME=VALUE", kv))
			continue
		}
		switch key := n.KeyOf(name, gpu.HIPVisible, gpu.CUDAVisible); key {
		case "":
		case "also-pin":
			errs = append(errs, fmt.Errorf("%s: sgpu-queue sets %s for every setup (to its GPUs, with the pin %s); give another name", name, name,
				n.Pin))
		default:
			errs = append(errs, fmt.Errorf("%s: sgpu-queue sets %s for every setup (the hook variable %s); give another name", name, name, key))
		}
	}
	return errs
}

func checkSetupEnv(face optname.Face, n hook.Names, env []string) error {
	var errs []error
	for _, err := range SetupEnvProblems(n, env) {
		errs = append(errs, fmt.Errorf("%s %w", face.Name("setup-env"), err))
	}
	return errors.Join(errs...)
}
