package weights

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultPath is the table of an arch and level when no path is given: TE's own name (docs/weights.md).
func DefaultPath(repoRoot, arch, level string) string {
	return filepath.Join(repoRoot, "ci-weights", "test_weights."+arch+".l"+level+".txt")
}

// Options say where a run's weight table lives and what an item it lacks weighs.
type Options struct {
	Path string // the local table; "" = DefaultPath
	// Default weighs an item the table has never seen; the engine makes ≤ 0
	// schedule.DefaultWeight.
	Default float64
	// Store returns where the table lives for an arch and level (the action's:
	// the Actions cache); nil = a File at path.
	Store func(arch, level, path string) Store
}

// TablePath is the local table's path for arch and level.
func (o Options) TablePath(repoRoot, arch, level string) string {
	if o.Path != "" {
		return o.Path
	}
	return DefaultPath(repoRoot, arch, level)
}

// Open is the table's store for arch and level.
func (o Options) Open(repoRoot, arch, level string) Store {
	path := o.TablePath(repoRoot, arch, level)
	if o.Store != nil {
		return o.Store(arch, level, path)
	}
	return File{Path: path}
}

// CheckLevel says what is wrong with a level as part of a file name and cache key; nil when nothing.
func CheckLevel(level string) error {
	if level == "" || strings.ContainsAny(level, "/\\ \t\n") || strings.HasPrefix(level, ".") {
		return errors.New("want a test level such as 1, 2 or 3")
	}
	return nil
}

// ArchesAt lists the arches with a table of the level under repoRoot: what a command without a GPU can go by.
func ArchesAt(repoRoot, level string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(repoRoot, "ci-weights"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var arches []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "test_weights.")
		if !ok || e.IsDir() {
			continue
		}
		arch, ok := strings.CutSuffix(rest, ".l"+level+".txt")
		if ok && arch != "" {
			arches = append(arches, arch)
		}
	}
	slices.Sort(arches)
	return arches, nil
}
