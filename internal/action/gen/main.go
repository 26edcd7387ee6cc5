// Command gen writes action.yml's inputs and outputs, the dev action and
// docs/action.md's tables from internal/settings and internal/action
// (action.Generate); go generate ./... runs it. Usage: gen REPO_ROOT.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/rocm/sgpu-queue/internal/action"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen REPO_ROOT")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

// write writes each generated file that differs from what root holds, and says so.
func write(root string) error {
	files, err := action.Generate(root)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(root, filepath.FromSlash(name))
		if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, files[name]) {
			continue
		}
		if err := safefs.WriteFile(root, path, files[name], 0o644); err != nil {
			return err
		}
		fmt.Printf("gen: wrote %s\n", name)
	}
	return nil
}
