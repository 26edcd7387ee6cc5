package junit

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// dirFS is os.DirFS(dir) whose files open without blocking on a FIFO: an item is
// the pull request's code and may leave one where its JUnit XML or a sidecar goes
// (docs/bad-day.md#the-state-between-runs-links-and-fifos). Anything but a
// directory or a regular file is refused (*safefs.Error).
type dirFS string

func (d dirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	p := filepath.Join(string(d), filepath.FromSlash(name))
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return os.Open(p)
	}
	return safefs.Open(p)
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(os.DirFS(string(d)), name)
}
func (d dirFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(os.DirFS(string(d)), name) }

// Lstat and ReadLink make dirFS an fs.ReadLinkFS, so fs.Lstat sees a link as one
// (a sidecar that is a link is never read).
func (d dirFS) Lstat(name string) (fs.FileInfo, error) {
	return os.DirFS(string(d)).(fs.ReadLinkFS).Lstat(name)
}

func (d dirFS) ReadLink(name string) (string, error) {
	return os.DirFS(string(d)).(fs.ReadLinkFS).ReadLink(name)
}
