package junit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// ManifestName lists the merged files this tool wrote in a JUnit dir, with their SHA-256, so a run replaces only
// its own files, never a user's.
const ManifestName = ".sgpu-queue-junit"

// Outputs tracks the merged files of one run in one JUnit directory.
type Outputs struct {
	Dir string
	// Root is Dir's trusted root (docs/bad-day.md#the-state-between-runs-links-and-fifos); nothing is
	// written through a link below it.
	Root string
	prev map[string]string // name -> sum, from the manifest of the last run
	now  map[string]string
	// unread: the manifest could not be read; it is then never replaced.
	unread bool
}

// OpenOutputs reads dir's manifest; a missing one is empty, an unreadable one (a FIFO too) an error.
func OpenOutputs(root, dir string) (*Outputs, error) {
	o := &Outputs{Dir: dir, Root: root, prev: map[string]string{}, now: map[string]string{}}
	data, err := safefs.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		o.unread = true
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

// outputName reports whether name could be a file this tool wrote in the dir: no path, not hidden.
func outputName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && filepath.Base(name) == name && !strings.ContainsAny(name, "/\\\x00") &&
		strings.HasSuffix(name, ".xml")
}

// Wrote records a file this run wrote in Dir.
func (o *Outputs) Wrote(path string) error {
	sum, err := safefs.SHA256(path)
	if err != nil {
		return err
	}
	o.now[filepath.Base(path)] = sum
	return nil
}

// Foreign is a file in the JUnit dir a run must not replace: unlisted, or changed since this tool wrote it.
type Foreign struct {
	Name    string
	Changed bool // listed, but no longer what was written
}

func (f *Foreign) Error() string { return "junit: " + f.about(f.Name) }

// about says why the file, named path, is foreign.
func (f *Foreign) about(path string) string {
	if f.Changed {
		return path + " changed since sgpu-queue wrote it"
	}
	return fmt.Sprintf("%s is not a file sgpu-queue wrote (%s does not list it)", path, ManifestName)
}

// MayReplace returns nil when name in Dir is absent or exactly what this tool wrote, else a *Foreign or the error
// that kept it from telling. The entry stays until this run writes the file, so a failed merge keeps it replaceable.
func (o *Outputs) MayReplace(name string) error {
	p := filepath.Join(o.Dir, name)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	want, listed := o.prev[name]
	if !listed || !fi.Mode().IsRegular() {
		return &Foreign{Name: name}
	}
	got, err := safefs.SHA256(p)
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if got != want {
		return &Foreign{Name: name, Changed: true}
	}
	if _, done := o.now[name]; !done {
		o.now[name] = want
	}
	return nil
}

// KeepOthers carries earlier runs' unchanged files into the new manifest and returns the names still regular files.
func (o *Outputs) KeepOthers() []string {
	var names []string
	for n := range o.prev {
		if _, ok := o.now[n]; ok {
			continue
		}
		err := o.MayReplace(n)
		_, kept := o.now[n]
		var f *Foreign
		if kept || errors.As(err, &f) && f.Changed {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Save writes the manifest of this run's files (atomically).
func (o *Outputs) Save() error { return o.save(o.now) }

// Checkpoint writes the manifest so far, so a run killed before Save leaves every file it wrote listed as its own.
func (o *Outputs) Checkpoint() error {
	if o.unread {
		return nil
	}
	all := make(map[string]string, len(o.prev)+len(o.now))
	for n, sum := range o.prev {
		all[n] = sum
	}
	for n, sum := range o.now {
		all[n] = sum
	}
	return o.save(all)
}

func (o *Outputs) save(entries map[string]string) error {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Merged JUnit files sgpu-queue wrote here, with their SHA-256: a later run\n# replaces one only while it is " +
		"unchanged, and deletes none. Do not edit.\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", entries[n], n)
	}
	// A unique temporary name: two runs at once never share one, and a user's ".tmp" file is never replaced.
	if err := safefs.WriteFile(o.Root, filepath.Join(o.Dir, ManifestName), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}
