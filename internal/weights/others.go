package weights

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxOthers bounds the other tables a run reads for priors; maxOtherSize each one.
const (
	maxOthers    = 16
	maxOtherSize = 16 << 20
)

// OtherTables reads the priors' other tables under <repoRoot>/ci-weights, closest to the run first, at most maxOthers.
// One that cannot be read is a warning.
func OtherTables(repoRoot, arch, level string, skip []string) ([]Other, []string) {
	dir := filepath.Join(repoRoot, "ci-weights")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("cannot list %s for priors: %v", dir, err)}
	}
	type cand struct {
		name string
		rank int
	}
	var cands []cand
	for _, e := range ents {
		a, l, ok := tableName(e.Name())
		path := filepath.Join(dir, e.Name())
		if !ok || e.IsDir() || slices.ContainsFunc(skip, func(s string) bool { return sameFile(s, path) }) {
			continue
		}
		rank := 0
		if a != arch {
			rank += 2
		}
		if l != level {
			rank++
		}
		cands = append(cands, cand{name: e.Name(), rank: rank})
	}
	slices.SortFunc(cands, func(x, y cand) int {
		if c := cmp.Compare(x.rank, y.rank); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	var out []Other
	var warns []string
	for _, c := range cands[:min(len(cands), maxOthers)] {
		t, _, err := read(filepath.Join(dir, c.name), maxOtherSize) // corrupt lines skipped silently
		if err != nil {
			warns = append(warns, fmt.Sprintf("weight table %s not used for priors: %v", filepath.Join(dir, c.name), err))
			continue
		}
		if t.Len() > 0 {
			out = append(out, Other{Name: c.name, Table: t})
		}
	}
	return out, warns
}

// tableName reads the arch and level from sgpu-queue's or TE's table file name.
func tableName(name string) (arch, level string, ok bool) {
	rest, ok := strings.CutPrefix(name, "test_weights.")
	if !ok {
		return "", "", false
	}
	if rest, ok = strings.CutSuffix(rest, ".txt"); !ok {
		return "", "", false
	}
	parts := strings.Split(rest, ".")
	switch {
	case len(parts) == 2 && strings.HasPrefix(parts[1], "l"):
		return parts[0], parts[1][1:], parts[0] != ""
	case len(parts) == 4 && strings.HasPrefix(parts[2], "l") && strings.HasPrefix(parts[3], "g"):
		return parts[1], parts[2][1:], parts[1] != ""
	}
	return "", "", false
}

// sameFile reports whether a and b name one file.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
