// Package tmpfstest gives tests a small tmpfs that fills up. Mounting needs
// CAP_SYS_ADMIN; where it is refused the test skips loudly rather than pass silently.
package tmpfstest

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a new temporary directory until the test
// ends.
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

// Fill writes zeros to a file in dir until ENOSPC and returns how many bytes fit;
// any other error fails, so a test cannot pass on a disk that broke otherwise.
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
