// Package safefs reads and writes the files one run leaves for the next
// (docs/bad-day.md#the-state-between-runs-links-and-fifos). A pull request controls that tree, so writes refuse
// a link or non-regular file below the trusted root, and reads refuse a FIFO or device instead of blocking.
// A link at or above the trusted root is the user's choice.
package safefs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
)

// Error is a path that is not what sgpu-queue reads or writes there: a link, FIFO, device, socket or wrong kind.
type Error struct {
	Path    string      // as the caller gave it
	Kind    string      // "a symbolic link", "a named pipe (FIFO)", …
	Mode    fs.FileMode // what is there (its Lstat type bits)
	Target  string      // a link's target, for the message
	Read    bool        // the refusal was of a read
	WantDir bool        // a directory belongs there
}

// Unwrap is syscall.ENOTDIR for a file where a directory belongs, as mkdir(2) says.
func (e *Error) Unwrap() error {
	if e.WantDir && !e.Mode.IsDir() && e.Mode&fs.ModeSymlink == 0 {
		return syscall.ENOTDIR
	}
	return nil
}

func (e *Error) Error() string { return e.Path + " " + e.Reason() }

// Reason is the message without the path, for a caller that names it already.
func (e *Error) Reason() string {
	what := e.Kind
	if e.Target != "" {
		what += " to " + e.Target
	}
	if e.Read {
		return fmt.Sprintf("is %s, not a regular file: sgpu-queue reads only regular files there; replace it with a file", what)
	}
	return fmt.Sprintf("is %s: sgpu-queue never writes through a link or into anything but its own files there; "+
		"remove it (a pull request may have committed it) and run again", what)
}

// Rel is a copy of e naming its path relative to base when under it.
func (e *Error) Rel(base string) *Error {
	c := *e
	if rel, err := filepath.Rel(base, e.Path); err == nil && filepath.IsAbs(e.Path) && !outside(rel) {
		c.Path = rel
	}
	return &c
}

// outside reports whether a filepath.Rel result leaves its base.
func outside(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Under reports whether path p is dir or below it, by name (no link is followed).
func Under(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && !outside(rel)
}

// TrustedRoot is repoRoot when dir is under it, else dir itself, which the user named.
func TrustedRoot(repoRoot, dir string) string {
	if repoRoot != "" && Under(repoRoot, dir) {
		return repoRoot
	}
	return dir
}

// kind names a file mode for a message.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// refuse is the *Error for path whose Lstat gave fi.
func refuse(path string, fi fs.FileInfo, read bool) *Error {
	e := &Error{Path: path, Kind: kind(fi.Mode()), Mode: fi.Mode().Type(), Read: read}
	if fi.Mode()&fs.ModeSymlink != 0 {
		e.Target, _ = os.Readlink(path)
	}
	return e
}

// realDir is nil for a real directory, fs.ErrNotExist for nothing, else the *Error naming what is there.
func realDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		e := refuse(d, fi, false)
		e.WantDir = true
		return e
	}
	return nil
}

// regularOrAbsent is nil for a regular file or nothing, else the *Error naming what is there.
func regularOrAbsent(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return refuse(path, fi, false)
	}
	return nil
}

// below lists the dirs strictly below root down to dir, outermost first; a dir not under root is checked alone.
func below(root, dir string) []string {
	root, dir = filepath.Clean(root), filepath.Clean(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || outside(rel) {
		return []string{dir}
	}
	if rel == "." {
		return nil
	}
	var out []string
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		out = append(out, p)
	}
	return out
}

// CheckDir is an *Error for the first dir below root down to dir that is there and not a real directory.
func CheckDir(root, dir string) error {
	for _, d := range below(root, dir) {
		err := realDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing below a missing directory exists either
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Check reports whether path may be written: CheckDir, and a regular file or nothing at path.
func Check(root, path string) error {
	if err := CheckDir(root, filepath.Dir(path)); err != nil {
		return err
	}
	return regularOrAbsent(path)
}

// MkdirAll makes dir and its parents up to root, each a real directory.
func MkdirAll(root, dir string) error {
	dirs := below(root, dir)
	// Above the outermost one is the root (or the user's own directory).
	top := root
	if len(dirs) > 0 {
		top = filepath.Dir(dirs[0])
	}
	if err := os.MkdirAll(top, 0o755); err != nil {
		return err
	}
	for _, d := range dirs {
		err := os.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			err = realDir(d) // something is there: a directory, or refused
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteFile replaces path whole (atomicfile.Replace), making its dirs; a link or non-regular file is refused and left.
func WriteFile(root, path string, data []byte, perm fs.FileMode) error {
	if err := MkdirAll(root, filepath.Dir(path)); err != nil {
		return err
	}
	if err := regularOrAbsent(path); err != nil { // its directories MkdirAll checked
		return err
	}
	return atomicfile.Replace(path, data, perm)
}

// OpenFile opens path for writing with flag (O_CREATE added), never through a link nor blocking on a FIFO:
// a non-regular file once opened is refused. Its dirs are made as MkdirAll makes them.
func OpenFile(root, path string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := MkdirAll(root, filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		// ELOOP (a link), ENXIO (a FIFO with no reader), EISDIR: say what is there.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, refuse(path, fi, false)
		}
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, refuse(path, fi, false)
	}
	return f, nil
}

// Remove deletes path when it is a regular file in real dirs below root; missing is fine, anything else is
// refused and left.
func Remove(root, path string) error {
	if err := Check(root, path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Rename renames the regular file from to to when both dirs are real and to is a regular file or nothing;
// anything else is refused and left.
func Rename(root, from, to string) error {
	for _, d := range []string{filepath.Dir(from), filepath.Dir(to)} {
		if err := CheckDir(root, d); err != nil {
			return err
		}
	}
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return refuse(from, fi, false)
	}
	if err := regularOrAbsent(to); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// RemoveEmptyDir removes dir when it is empty and real up to root; otherwise it is left silently for the user.
func RemoveEmptyDir(root, dir string) {
	if CheckDir(root, dir) == nil {
		_ = os.Remove(dir) // not empty, or not there: nothing to do
	}
}

// Open opens path for reading, following links (a user's config may be one), never blocking on a FIFO:
// anything but a regular file is refused.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refuse(path, fi, true) // fi is the opened file's: never a link
	}
	return f, nil
}

// ReadFile reads a whole regular file as Open opens it.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// SHA256 is the hex SHA-256 of the regular file at path, opened as Open opens it.
func SHA256(path string) (string, error) {
	f, err := Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
