package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
)

// JUnitVar holds a cmd item's JUnit file when JUnit is on; hook's name, so hook.Names.Uses knows it.
const JUnitVar = hook.JUnitFileVar

// cmdSuite is `<label> <logfile> cmd <file>`: one "<tag> <command…>" per line, run by sh -c from the repo root.
type cmdSuite struct {
	s    config.Suite
	file string
}

// maxCmdLine bounds one line of a command file, as config lines are bounded.
const maxCmdLine = 64 << 10

// JUnit: the item's command is given its file (Run.JUnit), and may write none.
func (*cmdSuite) JUnit() JUnit { return JUnitOffered }

func (*cmdSuite) sized() {}

func newCmd(s config.Suite) (Adapter, error) {
	if len(s.Args) != 1 {
		return nil, fail(s, nil, "", "want \"<label> <logfile> cmd <file>\": one command file, got %d argument(s)", len(s.Args))
	}
	return &cmdSuite{s: s, file: s.Args[0]}, nil
}

// List reads the command file where commands run, so it is the file they will see.
func (c *cmdSuite) List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	return timed(ctx, in, c.s, func(ctx context.Context, in Listing) (*Listed, error) { return c.list(ctx, ex, in) })
}

func (c *cmdSuite) list(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	s := c.s
	out, err := capture(ctx, ex, in, s, executor.Command{Path: "cat", Args: []string{"--", c.file}, Env: s.Environ(in.Env), Dir: in.Dir}, "")
	if err != nil {
		return nil, err
	}
	if rc := out.res.ExitCode; rc != 0 {
		return nil, fail(s, nil, out.tail, "cannot read the command file %s (cat exited with %d; a relative path is taken from the repo root)",
			c.file, rc)
	}
	items, err := ParseCommands(out.stdout, c.file)
	if err != nil {
		return nil, fail(s, err, "", "%v", err)
	}
	if len(items) == 0 {
		return nil, fail(s, ErrNoItems, "", "the command file %s has no \"<tag> <command…>\" line", c.file)
	}
	return &Listed{Items: items}, nil
}

// ParseCommands reads a command file, skipping comments and blank lines; a bad line is reported as "file:line: …".
func ParseCommands(data []byte, file string) ([]Item, error) {
	var items []Item
	var errs []error
	first := map[string]int{}
	last, err := config.EachLine(data, maxCmdLine, func(n int, line string) {
		text := strings.TrimLeft(line, " \t")
		if text == "" || text[0] == '#' {
			return
		}
		fail := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: %s", file, n, fmt.Sprintf(format, a...)))
		}
		if bad := strings.IndexFunc(line, config.IsControl); bad >= 0 {
			fail("control character %q in the line; write one \"<tag> <command…>\" per line", line[bad])
			return
		}
		tag, cmd := text, ""
		if i := strings.IndexAny(text, " \t"); i >= 0 {
			tag, cmd = text[:i], strings.TrimSpace(text[i:])
		}
		if cmd == "" {
			fail("tag %q has no command: write \"<tag> <command…>\"", tag)
			return
		}
		if at, dup := first[tag]; dup {
			fail("duplicate tag %q (first at line %d); tags name items and must be unique", tag, at)
			return
		}
		first[tag] = n
		items = append(items, Item{Tag: tag, Args: []string{cmd}})
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("%s:%d: %w", file, last+1, err))
	}
	return items, errors.Join(errs...)
}

// Command runs the item's line with sh -c from the repo root.
func (c *cmdSuite) Command(it Item, run Run) executor.Command {
	cmd := ""
	if len(it.Args) > 0 {
		cmd = it.Args[0]
	}
	junit := JUnitVar // unset unless JUnit is on: an outer value is not this item's file
	if run.JUnit != "" {
		junit += "=" + run.JUnit
	}
	return command(c.s, run, "sh", []string{"-c", cmd}, junit)
}
