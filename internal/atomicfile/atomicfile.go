// Package atomicfile replaces a file whole, so that a reader (or the next run, after
// a crash or a full disk) sees either the old content or the new one, never half of
// it and never a stray temporary file. Every file sgpu-queue rewrites as a unit (the
// weight table, queue/run.json, the report, the verdict files) goes through Write.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TempExtra is how many bytes a temporary file's name adds to the name of the file it
// replaces: "." + name + ".tmp" + up to 10 random digits (os.CreateTemp). Names that
// must fit the file system's 255-byte limit leave this much room.
const TempExtra = 1 + len(tempInfix) + 10

// tempInfix sits between the replaced file's name and os.CreateTemp's digits.
const tempInfix = ".tmp"

// TempOf says which file a directory entry is a leftover temporary file of
// (".<name>.tmp<digits>" → name), for a cleaner that removes only what Write left.
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

// Write replaces path with data.
//
// A symlink is followed (a chain of them too, even a dangling one) and its final
// target replaced, so a link to a shared file keeps pointing at it and the shared
// file is the one that changes. The data goes to a temporary file in the target's
// directory (created when missing), is synced, gets the mode of the file it replaces
// (perm for a new file), and is renamed over the target. On any failure the temporary
// file is removed and the target is left as it was; the error names path and wraps
// the cause (errors.Is(err, syscall.ENOSPC) on a full disk): an *Error once writing
// began.
func Write(path string, data []byte, perm fs.FileMode) error {
	target, err := Resolve(path)
	if err != nil {
		return err
	}
	return replace(path, target, data, perm)
}

// Replace replaces the directory entry path itself with data, as Write does but
// without following a symlink there (the rename replaces the link, never its
// target): the state a run keeps, where the caller (safefs.WriteFile) has refused a
// link already. The mode of a regular file it replaces is kept.
func Replace(path string, data []byte, perm fs.FileMode) error {
	return replace(path, path, data, perm)
}

// replace writes target (path, or what its links resolve to) whole, keeping the
// mode of a regular file there; an error names path.
func replace(path, target string, data []byte, perm fs.FileMode) error {
	mode := perm
	if fi, err := os.Lstat(target); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := write(target, data, mode); err != nil {
		return &Error{Path: path, Err: cause(err)}
	}
	return nil
}

// Error is a failed Write: the file it was to replace, and why (ENOSPC on a full
// disk), without the temporary file's name.
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

// Resolve follows path through any symlinks to the file they name (which need not
// exist yet). A path that is no symlink is returned as it is.
func Resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, cause(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, cause(err))
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: more than %d symbolic links in a chain (a loop?)", path, maxLinks)
}

// cause drops the *PathError around an error: the caller names the file, not the
// temporary one.
func cause(err error) error {
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
