package cli

import (
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"

	"github.com/rocm/sgpu-queue/internal/action"
)

// actionCmd is the container action's entry point; it takes no flags, the runner
// passes the inputs as INPUT_<NAME> variables (hyphens kept).
func actionCmd(e Env, args []string) int {
	for _, a := range args {
		if isHelp(a) {
			var names, outputs []string
			for _, k := range action.Inputs() {
				names = append(names, k.Name)
			}
			for _, o := range action.Outputs {
				outputs = append(outputs, o.Name)
			}
			fmt.Fprintf(e.Stdout, `Usage: sgpu-queue action

The GitHub container action's entry point (action.yml runs it). It reads its inputs from
INPUT_<NAME> variables, e.g. INPUT_LOG-DIR, runs phases 0–8 like "sgpu-queue run" (with
INPUT_MODE=plan it plans like "sgpu-queue plan", with INPUT_MODE=merge it merges like
"sgpu-queue merge"), and writes GITHUB_OUTPUT and GITHUB_STEP_SUMMARY. The config input
names CONFIG files as run takes them, every mode included (list, opaque, pytest, ctest,
cmd: docs/config.md, docs/adapters.md). Inputs:
  %s
Outputs: %s, rc-<label>
`, strings.Join(names, ", "), strings.Join(outputs, ", "))
			return exitcode.OK
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(e.Stderr, "sgpu-queue action: unexpected argument %q: the action reads INPUT_* variables, not arguments\n", args[0])
		return exitcode.Usage
	}
	ctx, force, stop := signalContext(e.Stderr)
	defer stop()
	return action.Run(ctx, action.Env{Getenv: e.Getenv, Environ: e.Environ, Stdout: &console{w: e.Stdout, stderr: e.Stderr}, Force: force})
}
