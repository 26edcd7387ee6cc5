package engine

import (
	"fmt"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// junitPrefix is the absolute JUnit prefix from the environment: relative prefixes
// are taken from the repo root, and the trailing slash is kept. With none there it
// is <log dir>/junit/ when Options.JUnit.InLogDir (the CLI) asks for one, else "".
func (r *run) junitPrefix() string {
	p, ok := hook.Env(r.o.Target.Env).Get(r.o.Target.Hooks.JUnitPrefix)
	if !ok || p == "" {
		if r.o.JUnit.InLogDir {
			return r.layout.JUnitDir() + "/"
		}
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.o.Target.RepoRoot, p)
	} else {
		p = filepath.Clean(p)
	}
	return p + "/"
}

// junitSuffix is the JUnit file suffix the suites are given with the prefix: the
// environment's, else ".xml". It is always passed along with the prefix, because
// TE's scripts write <prefix><tag><suffix> and add nothing themselves: with the
// prefix alone they write files without an extension, which no merge finds.
func (r *run) junitSuffix() string {
	if s, ok := hook.Env(r.o.Target.Env).Get(r.o.Target.Hooks.JUnitSuffix); ok && s != "" {
		return s
	}
	return junit.DefaultSuffix
}

// suiteJUnitDir is the JUnit folder of suite label under the prefix, where commands run,
// with a trailing slash; "" when there is no prefix. The folder is made: it is
// there before the suite's setup and items write into it (dispatch makes it again
// for each item).
func (r *run) suiteJUnitDir(label string) (string, error) {
	prefix := r.junitPrefix()
	if prefix == "" {
		return "", nil
	}
	if err := safefs.MkdirAll(r.junitPrefixRoot(), prefix+label); err != nil {
		return "", fmt.Errorf("JUnit folder of suite %q: %w", label, r.stateError(err))
	}
	p, err := r.target.Path(prefix + label)
	if err != nil {
		return "", err
	}
	return p + "/", nil
}
