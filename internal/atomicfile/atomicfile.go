// Package atomicfile replaces a file whole, so a reader or the next run, after a crash or a full disk,
// sees the old content or the new, never half nor a stray temporary file.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TempExtra is how many bytes a temporary file's name adds (".<name>.tmp<digits>"), for names that must fit 255 bytes.
const TempExtra = 1 + len(tempInfix) + 10

// tempInfix sits between the replaced file's name and os.CreateTemp's digits.
const tempInfix = ".tmp"

// TempOf names the file a leftover temporary entry belongs to, for a cleaner that removes only Write's.
func TempOf(entry string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(entry, ".")
	i := strings.LastIndex(rest, tempInfix)
	if !ok || i <= 0 {
		return "", false
	}
	n := rest[i+len(tempInfix):]
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return "", false
	}
	return rest[:i], true
}

// maxLinks bounds symlink chains, as the kernel does (ELOOP after 40).
const maxLinks = 40

// Write replaces path with data through a synced temporary file renamed over it. A symlink is followed, so the
// shared file it points at changes; the mode is kept. On failure the target is left as it was; the error wraps the
// cause (ENOSPC).
func Write(path string, data []byte, perm fs.FileMode) error {
	target, err := Resolve(path)
	if err != nil {
		return err
	}
	return replace(path, target, data, perm)
}

// Replace is Write without following a link at path: the rename replaces the link itself, for state where the
// caller refused links already (safefs.WriteFile).
func Replace(path string, data []byte, perm fs.FileMode) error {
	return replace(path, path, data, perm)
}

// replace writes target whole, keeping a regular file's mode; an error names path.
func replace(path, target string, data []byte, perm fs.FileMode) error {
	mode := perm
	if fi, err := os.Lstat(target); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := write(target, data, mode); err != nil {
		return &Error{Path: path, Err: Cause(err)}
	}
	return nil
}

// Error is a failed Write, naming the file, not the temporary one.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func write(target string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+tempInfix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	// A rename without a sync can leave an empty file after a power loss.
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}

// Resolve follows path through any symlinks to the file they name, which need not exist.
func Resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, Cause(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, Cause(err))
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: more than %d symbolic links in a chain (a loop?)", path, maxLinks)
}

// Cause drops the *PathError or *LinkError around err: the caller names the file.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
