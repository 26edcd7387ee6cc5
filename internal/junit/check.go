package junit

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckFile says why the JUnit file at path cannot be read as Merge reads it; nil when it can.
// An item's unreadable file fails the item (outcome.BadJUnit). It never follows a link nor blocks on a FIFO.
func CheckFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s): its results are not read", fi.Mode().Type())
	}
	_, err = readJUnit(dirFS(filepath.Dir(path)), filepath.Base(path), defaultLimits())
	return err
}
