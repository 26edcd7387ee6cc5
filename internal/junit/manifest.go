package junit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ManifestName is the file in a JUnit directory that lists the merged files the
// last run wrote there, each with the SHA-256 of what it wrote. A later run removes
// the files of suites that are no longer run (a reporter would otherwise count a
// removed suite's old results forever), and only when the file is still exactly
// what this tool wrote: a file a user put there, or changed, is never deleted.
const ManifestName = ".sgpu-queue-junit"

// Outputs tracks the merged files of one run in one JUnit directory.
type Outputs struct {
	Dir  string
	prev map[string]string // name -> sum, from the manifest of the last run
	now  map[string]string
}

// OpenOutputs reads dir's manifest; a missing one is an empty list, an unreadable
// one an error (nothing is then removed).
func OpenOutputs(dir string) (*Outputs, error) {
	o := &Outputs{Dir: dir, prev: map[string]string{}, now: map[string]string{}}
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("junit: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		if ok && len(sum) == 64 && outputName(name) {
			o.prev[name] = sum
		}
	}
	return o, nil
}

// outputName reports whether name is a file name this tool could have written in
// the directory itself: never a path, never hidden.
func outputName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && filepath.Base(name) == name && !strings.ContainsAny(name, "/\\\x00") && strings.HasSuffix(name, ".xml")
}

// Wrote records a file this run wrote in Dir.
func (o *Outputs) Wrote(path string) error {
	sum, err := fileSum(path)
	if err != nil {
		return err
	}
	o.now[filepath.Base(path)] = sum
	return nil
}

// Keep carries a file of the last run over to the new manifest when it is still
// what was written (a suite of this run whose merge failed keeps its old file, and
// a later run can still remove it).
func (o *Outputs) Keep(name string) {
	if sum, ok := o.prev[name]; ok {
		if _, done := o.now[name]; !done {
			if got, err := fileSum(filepath.Join(o.Dir, name)); err == nil && got == sum {
				o.now[name] = sum
			}
		}
	}
}

// RemoveStale deletes the files of the last run that this run did not write nor
// keep, when they are still byte for byte what was written. It returns the names it
// removed and, separately, those it left because they changed since.
func (o *Outputs) RemoveStale() (removed, changed []string) {
	names := make([]string, 0, len(o.prev))
	for n := range o.prev {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := o.now[n]; ok {
			continue
		}
		p := filepath.Join(o.Dir, n)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue // gone already, or replaced by something else: not ours
		}
		if sum, err := fileSum(p); err != nil || sum != o.prev[n] {
			changed = append(changed, n)
			continue
		}
		if err := os.Remove(p); err == nil {
			removed = append(removed, n)
		}
	}
	return removed, changed
}

// Save writes the manifest of this run's files (atomically).
func (o *Outputs) Save() error {
	names := make([]string, 0, len(o.now))
	for n := range o.now {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Merged JUnit files sgpu-queue wrote here, with their SHA-256: a later run\n# removes those of suites it no longer runs, if unchanged. Do not edit.\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", o.now[n], n)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	path := filepath.Join(o.Dir, ManifestName)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("junit: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
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
