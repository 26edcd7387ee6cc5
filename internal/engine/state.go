package engine

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// The JUnit prefix and dir are never written through a link
// (docs/bad-day.md#the-state-between-runs-links-and-fifos).

// junitPrefixRoot is the trusted root of the JUnit prefix: the log dir, else the
// repo root, else the prefix's own directory.
func (r *run) junitPrefixRoot() string {
	prefix := filepath.Clean(r.junitPrefix())
	if safefs.Under(r.layout.Root, prefix) {
		return r.layout.Trusted
	}
	return safefs.TrustedRoot(r.o.Target.RepoRoot, prefix)
}

// junitDirRoot is the trusted root of the JUnit dir.
func (r *run) junitDirRoot() string { return safefs.TrustedRoot(r.o.Target.RepoRoot, r.junitDir()) }

// checkJUnit refuses, before anything runs, a JUnit path that is not what a run
// writes there, or absent; prefixed is false for a merge, which has no prefix.
func (r *run) checkJUnit(labels []string, prefixed bool) error {
	if prefixed {
		prefix := r.junitPrefix()
		if prefix == "" {
			return nil // no JUnit: nothing is merged either
		}
		for _, l := range labels {
			err := safefs.CheckDir(r.junitPrefixRoot(), prefix+l)
			if err != nil && safefs.Under(r.layout.Root, prefix) {
				return r.logDirError(err) // the CLI's prefix is in the log dir
			}
			if err != nil {
				return r.stateError(err)
			}
		}
	}
	dir, root := r.junitDir(), r.junitDirRoot()
	files := []string{filepath.Join(dir, junit.ManifestName)}
	for _, l := range labels {
		files = append(files, filepath.Join(dir, l+".xml"))
	}
	for _, f := range files {
		if err := safefs.Check(root, f); err != nil {
			return r.stateError(err)
		}
	}
	return nil
}

// stateError is err for the user, a *safefs.Error's path relative to the repo root.
func (r *run) stateError(err error) error {
	var se *safefs.Error
	if errors.As(err, &se) {
		return se.Rel(r.o.Target.RepoRoot)
	}
	return err
}

// pathError is err of a file of the run at path: a *safefs.Error names the path
// already, any other error is prefixed with it.
func (r *run) pathError(path string, err error) error {
	if errors.As(err, new(*safefs.Error)) {
		return r.stateError(err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// refusedPath is the file whose write a link refused, else fallback (the file a
// gate reads).
func refusedPath(err error, fallback string) string {
	var ae *atomicfile.Error
	var se *safefs.Error
	switch {
	case !errors.As(err, &se):
		return fallback
	case errors.As(err, &ae):
		return ae.Path
	}
	return se.Path
}
