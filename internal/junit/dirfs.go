package junit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// dirFS is os.DirFS(dir) that never blocks on a FIFO an item left, refuses all but dirs and regular files
// (docs/bad-day.md#the-state-between-runs-links-and-fifos), and takes non-UTF-8 names, as a tag may hold any byte.
type dirFS string

// path is name under d, or fs.ErrInvalid for a name that could leave d.
func (d dirFS) path(op, name string) (string, error) {
	if !fs.ValidPath(strings.ToValidUTF8(name, "_")) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), nil
}

func (d dirFS) Open(name string) (fs.File, error) {
	p, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return os.Open(p)
	}
	return safefs.Open(p)
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := d.path("readdir", name)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	p, err := d.path("stat", name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

// Lstat and ReadLink make dirFS an fs.ReadLinkFS, so a sidecar that is a link is seen as one and never read.
func (d dirFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := d.path("lstat", name)
	if err != nil {
		return nil, err
	}
	return os.Lstat(p)
}

func (d dirFS) ReadLink(name string) (string, error) {
	p, err := d.path("readlink", name)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}
