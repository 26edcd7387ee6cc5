package junit

import (
	"fmt"
	"os"
	"path/filepath"
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
	lim := defaultLimits()
	data, err := readCapped(dirFS(filepath.Dir(path)), filepath.Base(path), lim.maxBytes)
	if err != nil {
		return err
	}
	_, err = parseJUnit(data, lim)
	return err
}
