// Package cli is the command-line face: it turns arguments, flags and SGPU_*
// environment variables into engine options and the engine's result into output and
// an exit code. It holds no scheduling logic of its own.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Env is the process environment seen by the CLI.
type Env struct {
	Args    []string // without the program name
	Stdout  io.Writer
	Stderr  io.Writer
	Getenv  func(string) string
	Environ []string
	Version string
}

// Main runs one command and returns the exit code; a panic is one line and
// exitcode.Internal, not a Go stack trace (unless SGPU_DEBUG is set).
func Main(e Env) (code int) {
	defer func() {
		if v := recover(); v != nil {
			code = internalError(e, v, debug.Stack())
		}
	}()
	return command(e)
}

// internalError reports a recovered panic and returns exitcode.Internal.
func internalError(e Env, v any, stack []byte) int {
	w := e.Stderr
	if w == nil {
		w = os.Stderr
	}
	msg := textfmt.OneLine(fmt.Sprint(v))
	fmt.Fprintf(w, "sgpu-queue: internal error: %s; please report it with the log\n", msg)
	if e.Getenv != nil && e.Getenv("SGPU_DEBUG") != "" {
		w.Write(stack)
	}
	return exitcode.Internal
}

func command(e Env) int {
	if len(e.Args) == 0 {
		usage(e.Stderr)
		return exitcode.Usage
	}
	cmd, args := e.Args[0], e.Args[1:]
	switch cmd {
	case "run":
		return runCmd(e, args)
	case "report":
		return reportCmd(e, args)
	case "action":
		return actionCmd(e, args)
	case "simulate":
		return simulateCmd(e, args)
	case "verify":
		return verifyCmd(e, args)
	case "plan":
		return planCmd(e, args)
	case "merge":
		return mergeCmd(e, args)
	case "version", "--version":
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprint(e.Stdout, "Usage: sgpu-queue version\n\nPrints \"sgpu-queue <version>\": the release tag it was built from, else the "+
				"module\nversion, else devel.\n")
			return exitcode.OK
		}
		fmt.Fprintf(e.Stdout, "sgpu-queue %s\n", version(e.Version))
		return exitcode.OK
	case "help", "-h", "-help", "--help":
		usage(e.Stdout)
		return exitcode.OK
	default:
		fmt.Fprintf(e.Stderr, "sgpu-queue: unknown command %q\n", cmd)
		usage(e.Stderr)
		return exitcode.Usage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `sgpu-queue runs GPU test suites as one longest-first work queue, one worker per GPU.

Usage:
  sgpu-queue verify [flags] CONFIG...  check that every listed tag selects exactly its own call line
                                       (run it first when adopting the queue)
  sgpu-queue run [flags] CONFIG...     phases 0–8: expand, order, run, verdicts, learn, report
  sgpu-queue simulate --weights FILE --gpus N [--noise F] [--runs K] [--seed S] [--runners R]
                                       predicted wall clock and utilisation per policy,
                                       or of 1 … R runners of N GPUs each
  sgpu-queue plan --shards K --gpus N CONFIG...
                                       split the items over K runners of a job matrix (no GPU needed)
  sgpu-queue run --shard I/K --plan FILE CONFIG...
                                       run shard I of the plan (a job of the matrix)
  sgpu-queue merge [--log-dir OUT] SHARD_LOGDIR...
                                       merge the shards' log dirs: verdicts, one learning pass, report
  sgpu-queue report LOGDIR             rebuild report/schedule.md from the files of a run
  sgpu-queue action                    the GitHub container action's entry point (reads INPUT_* variables)
  sgpu-queue version

A CONFIG file names one suite per line, of mode list or opaque (a script of the
hook contract) or pytest, ctest or cmd (no script: an adapter lists and runs the
tool). Run "sgpu-queue COMMAND --help" for a command's flags; the reference is the
docs/ folder of github.com/rocm/sgpu-queue: config.md, adapters.md, hooks.md.
`)
}

func version(v string) string {
	if v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// newFlags makes a flag set whose errors and --help go to the right stream.
func newFlags(name string, e Env, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags that may come before, between or after the positional
// arguments; it returns the positionals, and an exit code with true to stop.
func parse(fs *flag.FlagSet, args []string, e Env) ([]string, int, bool) {
	var pos []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelp(a) {
			fs.SetOutput(e.Stdout) // asked-for help goes to stdout, errors to stderr
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, true
			}
			return nil, exitcode.Usage, true
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, 0, false
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), 0, false
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// envDefault is the SGPU_* variable that may set a flag's default.
func envDefault(e Env, flagName, def string) string {
	name := "SGPU_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	if v := e.Getenv(name); v != "" {
		return v
	}
	return def
}

// signalContext is cancelled on the first SIGINT, SIGTERM or SIGHUP, so the run
// stops its items instead of orphaning them on the GPUs; the channel closes on the
// second. SIGPIPE does not end the process meanwhile (see console).
func signalContext(stderr io.Writer) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// Notify, not Ignore: an ignored SIGPIPE would be inherited by every suite
	// command, a caught one is reset at exec.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-ch:
				n++
				name := signalName(s)
				if n == 1 {
					fmt.Fprintf(stderr, "sgpu-queue: %s: stopping dispatch and terminating running items, "+
						"then writing what was measured (signal again to kill them now)\n", name)
					cancel()
				} else if n == 2 {
					fmt.Fprintf(stderr, "sgpu-queue: %s again: killing running items now\n", name)
					close(force)
				}
			case <-pipe:
			case <-done:
				return
			}
		}
	}()
	return ctx, force, func() {
		signal.Stop(ch)
		signal.Stop(pipe)
		close(done)
		cancel()
	}
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	default:
		return "SIGTERM"
	}
}

// console is the run's terminal output. One that goes away (tee died, a terminal
// hung up) must not stop the run: the first failed write is said once on stderr.
type console struct {
	mu     sync.Mutex
	w      io.Writer
	stderr io.Writer
	lost   bool
}

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost {
		return len(p), nil
	}
	if _, err := c.w.Write(p); err != nil {
		c.lost = true
		fmt.Fprintf(c.stderr, "sgpu-queue: console output lost (%v); the run goes on, its files in the log dir are complete\n", err)
	}
	return len(p), nil
}
