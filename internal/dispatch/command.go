package dispatch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
)

// command is the command that runs one attempt of an item on gpu (a multi-GPU
// item's ids joined by ","), its output to log: a list item re-enters its suite's script in its own working directory with
// the hook contract's filter, an opaque item runs the script whole there, and an
// adapter item runs what its adapter builds (pytest on its file, ctest -R on its
// names, a cmd line) from the repo root (docs/adapters.md). cwd is the item's own
// directory, to create before it runs and remove after when empty; "" for an
// adapter item.
func (d *dispatcher) command(it Item, gpu string, log io.Writer) (c executor.Command, cwd string, err error) {
	// The executor names the command in its warnings (processes left behind).
	label := "item " + name(it)
	if it.Adapted() {
		c, err = d.adapterCommand(it, gpu, log)
		c.Name = label
		return c, "", err
	}
	cwd = d.cfg.Layout.ItemCwd(it.Label, it.Tag)
	env, err := d.env(it, gpu)
	if err != nil {
		return c, "", err
	}
	return executor.Command{Path: it.Suite.Path, Args: it.Suite.Args, Env: env, Dir: cwd, Stdout: log, Stderr: log, Name: label}, cwd, nil
}

// adapterCommand is an adapter item's command: the adapter environment with the
// item's GPUs pinned, the repo root, and its JUnit file (ItemFile) made absolute
// and mapped to where commands run, with its folder created (a tag that is a path,
// tests/a/test_x.py, puts it in a folder of its own).
func (d *dispatcher) adapterCommand(it Item, gpu string, log io.Writer) (executor.Command, error) {
	run := adapter.Run{
		Env: d.cfg.Hooks.AdapterEnv(d.cfg.Env, d.cfg.Level).With(d.pins(gpu)...),
		Dir: d.cfg.Dir, Stdout: log, Stderr: log, Only: it.Only,
	}
	if local := d.xmlFile(it); local != "" {
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return executor.Command{}, fmt.Errorf("cannot create the folder of its JUnit file: %w", err)
		}
		p, err := d.mapPath(local)
		if err != nil {
			return executor.Command{}, err
		}
		run.JUnit = p
	}
	return it.Adapter.Command(it.Unit, run), nil
}

// pins are the assignments that give the item its GPUs (ids joined by ","): the pin
// variable and the pool's other visible-devices variables; and the rendezvous port
// of its first GPU, so torchrun items running at once never share one.
func (d *dispatcher) pins(gpu string) []string {
	a := hook.Assign(gpu, append([]string{d.cfg.PinVar}, d.cfg.AlsoPin...)...)
	if p, ok := d.cfg.Ports[hook.FirstGPU(gpu)]; ok {
		a = append(a, hook.MasterPort+"="+strconv.Itoa(p))
	}
	return a
}

// env is a list or opaque item's environment: the hook contract with its suite's
// GPU switch, its GPUs, its JUnit prefix.
func (d *dispatcher) env(it Item, gpu string) ([]string, error) {
	e := d.cfg.Hooks.ItemEnv(it.Suite.Environ(d.cfg.Env), d.cfg.Level, it.Suite.GPUKind(), it.Tag, it.Opaque()).With(d.pins(gpu)...)
	if it.Narrowed && d.cfg.Hooks.OnlyTests != "" {
		only := it.OnlyTests
		if only != "" {
			p, err := d.mapPath(only)
			if err != nil {
				return nil, err
			}
			only = p
		}
		e = e.With(d.cfg.Hooks.OnlyTests + "=" + only)
	}
	if d.cfg.JUnitPrefix != "" {
		// The suite's folder is there before the item runs: a script that writes
		// <prefix><tag>.xml without mkdir -p would otherwise write nothing, and its
		// item be judged a no-run although its call line ran.
		if err := os.MkdirAll(d.cfg.JUnitPrefix+it.Label, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create its JUnit folder: %w", err)
		}
		p, err := d.mapPath(d.cfg.JUnitPrefix + it.Label)
		if err != nil {
			return nil, err
		}
		e = e.With(d.cfg.Hooks.JUnitPrefix + "=" + strings.TrimSuffix(p, "/") + "/")
		if d.cfg.JUnitSuffix != "" {
			// The suffix goes with the prefix: TE's scripts write
			// <prefix><tag><suffix> and add no extension of their own.
			e = e.With(d.cfg.Hooks.JUnitSuffix + "=" + d.cfg.JUnitSuffix)
		}
	}
	return e, nil
}

// xmlFile is the local path of the item's JUnit XML (junit.ItemFile under
// <prefix><label>/), "" when this run knows none: no JUnit prefix, an opaque item
// (its files are named by the suite), a list tag that would put it outside its
// suite's directory.
func (d *dispatcher) xmlFile(it Item) string {
	return JUnitFile(d.cfg.JUnitPrefix, d.cfg.JUnitSuffix, it)
}

// JUnitFile is the local path of item's JUnit XML under the JUnit prefix with the
// suffix, "" when there is none to know (xmlFile). The re-run state reads the
// sidecars beside it (docs/reruns.md).
func JUnitFile(prefix, suffix string, it Item) string {
	if prefix == "" {
		return ""
	}
	rel, ok := junit.ItemFile(it.Tag, suffix, it.Adapted())
	if !ok {
		return ""
	}
	return filepath.Join(prefix+it.Label, filepath.FromSlash(rel))
}

// ownLimitSlack is what an item with a time limit of its own (ctest's TIMEOUT) gets
// past it before the hang deadline: CTest's start, its reading of the tests'
// properties, and its kill of a test past TIMEOUT (which fails the test: the item
// is then failed, not timed out).
const ownLimitSlack = 30 * time.Second

// deadline is the item's hang deadline (0: none) and, for its log, where it came
// from: the learned one (Timeout.For), raised to an adapter item's own limit plus
// ownLimitSlack, so that the tool enforces its limit first.
func (d *dispatcher) deadline(it Item) (time.Duration, string) {
	limit := d.cfg.Timeout.For(it.Item)
	if limit <= 0 {
		return 0, ""
	}
	why := d.cfg.Timeout.Explain(it.Item)
	if own := it.Unit.Timeout; it.Adapted() && own > 0 && limit < own+ownLimitSlack {
		limit = own + ownLimitSlack
		why = fmt.Sprintf("its own time limit %s (ctest TIMEOUT) + %s, above %s", own, ownLimitSlack, why)
	}
	return limit, why
}
