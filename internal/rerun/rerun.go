// Package rerun keeps what failed, so that a re-run of the same job runs only that
// (docs/reruns.md). The files are TE's, so TE's tools and sgpu-queue read each
// other's; a state record beside them lets a run trust only state of its own key.
// Every write goes through safefs: never through a link.
package rerun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Dir is the folder of the re-run state under the repo root.
const Dir = "ci-rerun"

// Files names the re-run state of one key.
type Files struct {
	Root string // the repo root
	StateKey
}

// QueueDir is ci-rerun/<queue> under the root.
func (f Files) QueueDir() string { return filepath.Join(f.Root, Dir, f.Queue) }

// Failed is the list of the items that failed the last attempt.
func (f Files) Failed() string {
	return filepath.Join(f.QueueDir(), "failed."+f.Arch+".l"+f.Level+".tsv")
}

// State is the record of the failed list's key and digests, beside it.
func (f Files) State() string {
	return filepath.Join(f.QueueDir(), "state."+f.Arch+".l"+f.Level+".json")
}

// TestsDir holds one file of test ids per item that can be narrowed.
func (f Files) TestsDir() string { return filepath.Join(f.QueueDir(), "tests") }

// Tests is the file of item k's failed tests, named as the item's log is.
func (f Files) Tests(k record.ItemID) string {
	return filepath.Join(f.TestsDir(), TestsName(k))
}

// ReadFailed reads a failed list and returns its bytes too; a missing file is no
// list.
func ReadFailed(path string) ([]record.ItemID, []byte, error) {
	data, err := safefs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("re-run list %s: %w", path, err)
	}
	keys, err := ParseFailed(data, path)
	return keys, data, err
}

// ParseFailed reads a failed list of "<label>\t<tag>" lines. An empty label is an
// error, so a mangled file never narrows a run to nothing.
func ParseFailed(data []byte, path string) ([]record.ItemID, error) {
	var keys []record.ItemID
	seen := map[record.ItemID]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		label, tag, _ := strings.Cut(line, "\t")
		// A label never holds white space (config.md), so none around it is kept.
		k := record.ItemID{Label: strings.TrimSpace(logdir.UnescapeField(label)), Tag: logdir.UnescapeField(tag)}
		if k.Label == "" {
			return nil, fmt.Errorf("%s:%d: a line with no suite label (want \"<label><TAB><tag>\"); "+
				"delete the file to run everything", path, n)
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("re-run list %s: %w", path, err)
	}
	return keys, nil
}

// WriteFile replaces a file of the re-run state under root, never through a
// symlink (*safefs.Error).
func WriteFile(root, path string, data []byte) error {
	return safefs.WriteFile(root, path, data, 0o644)
}

// Narrowing is what a re-run queues.
type Narrowing struct {
	Failed int                    // items in the failed list
	Keep   map[record.ItemID]bool // the failed items this run has: these are queued
	// Missing are the failed items this run did not list, in the list's order.
	Missing []record.ItemID
}

// Narrowed reports whether the run is narrowed: some failed item is here.
func (n Narrowing) Narrowed() bool { return len(n.Keep) > 0 }

// Narrow is the narrowing of queued by a failed list. None in common runs
// everything: an empty intersection would test nothing and pass.
func Narrow(failed, queued []record.ItemID) Narrowing {
	have := make(map[record.ItemID]bool, len(queued))
	for _, k := range queued {
		have[k] = true
	}
	n := Narrowing{Failed: len(failed), Keep: map[record.ItemID]bool{}}
	for _, k := range failed {
		if have[k] {
			n.Keep[k] = true
		} else {
			n.Missing = append(n.Missing, k)
		}
	}
	return n
}
