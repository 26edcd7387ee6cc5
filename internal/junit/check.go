package junit

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// CheckFile says why the JUnit XML file at path cannot be read as Merge reads it
// (not a regular file, over MaxFileBytes, malformed, not JUnit); nil when it can.
// Phase 4 asks it of the file an item was given, so that an item whose results
// cannot be read fails (outcome.BadJUnit) where Merge would give it an error case.
// It never follows a symlink (Merge's walk does not) and never blocks on a FIFO.
func CheckFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s): its results are not read", fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	lim := defaultLimits()
	data, err := io.ReadAll(io.LimitReader(f, lim.maxBytes+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > lim.maxBytes {
		return fmt.Errorf("larger than the %s limit on one JUnit file; not read", humanBytes(lim.maxBytes))
	}
	_, err = parseJUnit(data, lim)
	return err
}
