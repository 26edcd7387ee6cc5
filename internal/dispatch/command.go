package dispatch

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// command is the command that runs one attempt of an item on gpu, as its adapter
// builds it (docs/adapters.md). cwd is the item's own directory when its command
// runs there, to create before and remove after when empty; "" otherwise.
func (d *dispatcher) command(it expand.Item, gpu string, log io.Writer) (c executor.Command, cwd string, err error) {
	run, err := d.runOf(it, gpu, log)
	if err != nil {
		return c, "", err
	}
	c = it.Adapter.Command(it.Unit, run)
	// The executor names the command in its warnings (processes left behind).
	c.Name = "item " + name(it)
	if c.Dir == run.Cwd {
		cwd = run.Cwd
	}
	return c, cwd, nil
}

// runOf is what the item's adapter builds its command from. Its JUnit folder is
// created: a tag that is a path puts a given file in a folder of its own.
func (d *dispatcher) runOf(it expand.Item, gpu string, log io.Writer) (adapter.Run, error) {
	pins := d.pins(gpu)
	run := adapter.Run{
		Env: d.cfg.Hooks.AdapterEnv(d.cfg.Env, d.cfg.Level).With(pins...),
		Dir: d.cfg.RepoRoot, Cwd: d.cfg.Layout.ItemCwd(it.Label, it.Tag), Stdout: log, Stderr: log,
		Hook:     adapter.Hook{Names: d.cfg.Hooks, Level: d.cfg.Level, Base: d.cfg.Env, Pin: pins},
		Narrowed: it.Narrowed, Only: it.Only,
	}
	if it.OnlyTests != "" {
		p, err := d.cfg.Path(it.OnlyTests)
		if err != nil {
			return run, err
		}
		run.OnlyFile = p
	}
	if adapter.JUnitOf(it.Adapter) == adapter.JUnitUnderPrefix {
		var err error
		run.JUnitDir, err = d.junitDir(it)
		run.JUnitSuffix = d.cfg.JUnitSuffix
		return run, err
	}
	if local := d.xmlFile(it); local != "" {
		if err := safefs.MkdirAll(d.junitRoot(), filepath.Dir(local)); err != nil {
			return run, fmt.Errorf("cannot create the folder of its JUnit file: %w", err)
		}
		p, err := d.cfg.Path(local)
		if err != nil {
			return run, err
		}
		run.JUnit = p
	}
	return run, nil
}

// junitDir is the suite's folder under the JUnit prefix, where commands run; "" with
// no prefix. It is made first: a script without mkdir -p would write nothing, and
// its item be judged a no-run although it ran.
func (d *dispatcher) junitDir(it expand.Item) (string, error) {
	if d.cfg.JUnitPrefix == "" {
		return "", nil
	}
	if err := safefs.MkdirAll(d.junitRoot(), d.cfg.JUnitPrefix+it.Label); err != nil {
		return "", fmt.Errorf("cannot create its JUnit folder: %w", err)
	}
	p, err := d.cfg.Path(d.cfg.JUnitPrefix + it.Label)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(p, "/") + "/", nil
}

// junitRoot is the JUnit prefix's trusted root (Config.JUnitRoot).
func (d *dispatcher) junitRoot() string {
	if d.cfg.JUnitRoot == "" {
		return filepath.Clean(d.cfg.JUnitPrefix)
	}
	return d.cfg.JUnitRoot
}

// pins are the assignments that give the item its GPUs, and its first GPU's
// rendezvous port, so torchrun items running at once never share one.
func (d *dispatcher) pins(gpu string) []string {
	a := hook.Assign(gpu, append([]string{d.cfg.PinVar}, d.cfg.AlsoPin...)...)
	if p, ok := d.cfg.Ports[hook.FirstGPU(gpu)]; ok {
		a = append(a, hook.MasterPort+"="+strconv.Itoa(p))
	}
	return a
}

// xmlFile is the local path of the item's JUnit XML, "" when this run knows none (no
// prefix, an opaque item, a tag that would leave its suite's directory).
func (d *dispatcher) xmlFile(it expand.Item) string {
	return JUnitFile(d.cfg.JUnitPrefix, d.cfg.JUnitSuffix, it)
}

// JUnitFile is the local path of item's JUnit XML, "" when there is none to know;
// the re-run state reads the sidecars beside it (docs/reruns.md).
func JUnitFile(prefix, suffix string, it expand.Item) string {
	if prefix == "" {
		return ""
	}
	rel, ok := junit.ItemFile(it.Tag, suffix, adapter.JUnitOf(it.Adapter) != adapter.JUnitUnderPrefix)
	if !ok {
		return ""
	}
	return filepath.Join(prefix+it.Label, filepath.FromSlash(rel))
}

// ownLimitSlack is what an item with a limit of its own (ctest's TIMEOUT) gets past
// it before the hang deadline, so CTest's own kill (a failure) comes first.
const ownLimitSlack = 30 * time.Second

// deadline is the item's hang deadline (0: none) and where it came from: the learned
// one, raised to an item's own limit plus ownLimitSlack so the tool enforces it first.
func (d *dispatcher) deadline(it expand.Item, factor float64) deadline {
	limit := d.cfg.Timeout.For(it.Item, factor)
	if limit <= 0 {
		return deadline{}
	}
	why := d.cfg.Timeout.Explain(it.Item, factor)
	if own := it.Unit.Timeout; own > 0 && limit < own+ownLimitSlack {
		limit = own + ownLimitSlack
		why = fmt.Sprintf("its own time limit %s (ctest TIMEOUT) + %s, above %s", own, ownLimitSlack, why)
	}
	return deadline{limit: limit, why: why}
}

// deadline is an attempt's hang deadline (0: none) and where it came from.
type deadline struct {
	limit time.Duration
	why   string
}
