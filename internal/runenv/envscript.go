package runenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// The env-script: docs/hooks.md "The environment of every command".

// envMarker ends the script's own output on stdout; env -0 follows it.
const envMarker = "\x1esgpu-queue:env\n"

// envShell runs the script ($1) with its output on stderr, then prints the marker and
// the environment it leaves. A script that fails, or exits, prints no marker.
const envShell = `eval "$1" >&2 || exit; printf '\036sgpu-queue:env\n'; exec env -0`

// shellOwn are the variables a shell maintains by itself: never the script's.
var shellOwn = []string{"PWD", "OLDPWD", "SHLVL", "_"}

// ApplyEnvScript runs o.EnvScript once on t and lays what it exported over t.Env,
// naming them on out. o must be settled (Settle).
func ApplyEnvScript(ctx context.Context, face optname.Face, o Options, t *Target, out io.Writer, warn func(string)) error {
	if o.EnvScript == "" {
		return nil
	}
	given := o.Hooks.AdapterEnv(t.Env, o.Level)
	var stdout bytes.Buffer
	errs := &textfmt.Tail{}
	console := &textfmt.Prefixer{W: out, Prefix: "    | "}
	sctx, cancel := executor.Deadline(ctx, o.ListTimeout, errListDeadline)
	defer cancel()
	res, err := t.Exec.Run(sctx, executor.Command{
		Name: face.Name("env-script"), Path: EnvScriptShell(o.EnvScript),
		Args: []string{"-c", envShell, "sgpu-queue-env-script", o.EnvScript},
		Env:  given, Dir: o.RepoRoot, Stdout: &stdout, Stderr: io.MultiWriter(errs, console),
	})
	console.Flush()
	what := face.Name("env-script")
	_, dump, marked := strings.Cut(stdout.String(), envMarker)
	switch {
	case err != nil:
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("%s could not run: %w", what, err)}
	case res.Cancelled && executor.PastDeadline(ctx, sctx, errListDeadline):
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("%s did not end within %s (%s) and was stopped:\n%s",
			what, o.ListTimeout, face.Name("list-timeout"), textfmt.Indent(errs.String()))}
	case res.Cancelled || ctx.Err() != nil:
		return &exitcode.Error{Code: exitcode.Interrupted, Err: fmt.Errorf("%s cancelled: %w", what, context.Canceled)}
	case res.ExitCode != 0 || !marked:
		return &exitcode.Error{Code: exitcode.Failed, Err: fmt.Errorf("%s exited with %d before its end (nothing ran; its status is its last "+
			"command's):\n%s", what, res.ExitCode, textfmt.Indent(errs.String()))}
	}
	vars, ignored := ExportedBy(given, strings.Split(dump, "\x00"), o.Hooks)
	t.Env = t.Env.With(vars...)
	var names []string
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(out, "  %s: %d variable(s) for every command: %s\n", what, len(names), strings.Join(names, " "))
	if len(ignored) > 0 {
		warn(fmt.Sprintf("%s sets %s, which sgpu-queue sets itself for each command: its value is not used",
			what, strings.Join(ignored, ", ")))
	}
	return nil
}

// ExportedBy is what a script's environment after adds to or changes in given, but
// the shell's own variables; those the tool sets itself are returned in ignored.
func ExportedBy(given hook.Env, after []string, n hook.Names) (vars, ignored []string) {
	for _, kv := range after {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !hook.ValidName(name) || slices.Contains(shellOwn, name) || strings.HasPrefix(name, executor.MarkPrefix) {
			continue
		}
		if old, set := given.Get(name); set && old == value {
			continue
		}
		if slices.ContainsFunc(n.Uses(gpu.HIPVisible, gpu.CUDAVisible), func(u hook.Use) bool { return u.Name == name }) {
			ignored = append(ignored, name)
			continue
		}
		vars = append(vars, kv)
	}
	return vars, ignored
}

// EnvScriptShell is the shell that runs an env-script: the one its first line names
// (#!/bin/bash, #!/usr/bin/env bash), else sh.
func EnvScriptShell(script string) string {
	first, _, _ := strings.Cut(script, "\n")
	words := strings.Fields(strings.TrimPrefix(first, "#!"))
	switch {
	case !strings.HasPrefix(first, "#!") || len(words) == 0:
		return "sh"
	case len(words) > 1 && path.Base(words[0]) == "env":
		return words[1]
	}
	return words[0]
}

// errListDeadline is the cause of a context ended by --list-timeout.
var errListDeadline = errors.New("list deadline")
