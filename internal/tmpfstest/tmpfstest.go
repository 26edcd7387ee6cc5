// Package tmpfstest gives tests a small, real file system that fills up: a tmpfs
// mounted on a temporary directory. Mounting needs CAP_SYS_ADMIN (root in CI); where
// it is refused the test is skipped with a loud reason instead of passing silently.
package tmpfstest

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes (rounded up to pages by the kernel) on a new
// temporary directory and unmounts it when the test ends.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("TMPFS UNAVAILABLE: cannot mount a %d-byte tmpfs on %s (%v): the full-disk test is skipped; run it as root (CAP_SYS_ADMIN)",
			size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes zeros to a file in dir until the file system is full, and returns how
// many bytes fit (its error, ENOSPC, is the point and not returned). Any other write
// error fails the test: a full-disk test must not pass on a disk that broke
// otherwise.
func Fill(t testing.TB, dir string) int64 {
	t.Helper()
	f, err := os.Create(dir + "/fill")
	if err != nil {
		t.Fatalf("filling %s: %v", dir, err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n
		}
		if err != nil {
			t.Fatalf("filling %s: %v after %d bytes, not ENOSPC", dir, err, n)
		}
	}
}
