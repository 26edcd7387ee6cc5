package engine

import (
	"fmt"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// junitPrefix is the absolute JUnit prefix from the environment (relative to the
// repo root), else <log dir>/junit/ when Options.JUnit.InLogDir, else "".
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

// junitSuffix is the environment's JUnit suffix, else ".xml". It always goes with
// the prefix: TE's scripts add no extension, and no merge finds a file without one.
func (r *run) junitSuffix() string {
	if s, ok := hook.Env(r.o.Target.Env).Get(r.o.Target.Hooks.JUnitSuffix); ok && s != "" {
		return s
	}
	return junit.DefaultSuffix
}

// suiteJUnitDir is suite label's JUnit folder under the prefix, where commands run,
// with a trailing slash; "" without a prefix. It is made before the setup writes.
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
