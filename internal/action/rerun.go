package action

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/cache"
	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// The re-run state (docs/reruns.md) travels between attempts of a job leg in the
// Actions cache, so "Re-run failed jobs" runs only what failed.

// rerunState is where a job leg's re-run state lives in the cache.
type rerunState struct {
	store   *cache.Store
	prefix  string // "<cache-key-prefix>-rerun-<run id>-<leg>-a": each attempt adds its number
	attempt int
}

// maxRerunBytes bounds the packed state (a failed list and test-id files: a few KiB).
const maxRerunBytes = 8 << 20

// rerunStore is the leg's re-run state in the step's cache; nil without one.
func (a *act) rerunStore() *rerunState {
	store, cfg := a.blobStore(maxRerunBytes)
	if store == nil {
		return nil
	}
	return &rerunState{
		store:   store,
		prefix:  fmt.Sprintf("%s-rerun-%s-%s-a", cfg.Prefix, cfg.RunID, CacheLeg(a.leg)),
		attempt: runAttempt(a.e.Getenv),
	}
}

func runAttempt(env func(string) string) int {
	n, err := strconv.Atoi(strings.TrimSpace(env("GITHUB_RUN_ATTEMPT")))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// restore puts the latest earlier attempt's state into root/ci-rerun/; with none
// cached, the workspace's is used, as TE's rocm-ci.yml restores it itself.
func (st *rerunState) restore(ctx context.Context, a *act, root string) {
	if st == nil || st.attempt < 2 {
		return
	}
	key, data, err := st.store.LoadBlob(ctx, st.prefix)
	switch {
	case err != nil:
		a.obs.Warn(err.Error() + "; the re-run runs everything")
		return
	case key == "":
		fmt.Fprintf(a.e.Stdout, "  re-run state: attempt %d, but no earlier attempt of this job saved one (%s*): running everything\n",
			st.attempt, st.prefix)
		return
	}
	n, err := unpackRerun(data, filepath.Join(root, rerun.Dir))
	if err != nil {
		a.obs.Warn(fmt.Sprintf("re-run state %s: %v; the re-run runs everything", key, err))
		return
	}
	fmt.Fprintf(a.e.Stdout, "  re-run state: restored %s (%d file(s) into %s/)\n", key, n, rerun.Dir)
}

// save stores root/ci-rerun/ under this attempt's key, even when green: its empty
// list ends a chain of re-runs.
func (st *rerunState) save(ctx context.Context, a *act, root string) {
	if st == nil {
		return
	}
	data, n, err := packRerun(filepath.Join(root, rerun.Dir))
	if err != nil {
		a.obs.Warn(fmt.Sprintf("re-run state not saved: %v", err))
		return
	}
	if n == 0 {
		return // the run wrote none (it stopped before its items ran)
	}
	key := st.prefix + strconv.Itoa(st.attempt)
	if err := st.store.SaveBlob(ctx, key, data); err != nil {
		a.obs.Warn(err.Error() + ": a re-run of this job will run everything")
		return
	}
	fmt.Fprintf(a.e.Stdout, "  re-run state: saved %d file(s) of %s/ as %s\n", n, rerun.Dir, key)
}

// rerunFile is a path inside ci-rerun/ that the state holds; nothing else is packed
// or unpacked.
var rerunFile = regexp.MustCompile(`^[A-Za-z0-9_.-]+/(failed\.[^/]+\.tsv|state\.[^/]+\.json|tests/[^/]+\.txt)$`)

// packRerun is the state's files under dir as a gzipped tar, and how many.
func packRerun(dir string) ([]byte, int, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || !rerunFile.MatchString(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		n++
		_, err = tw.Write(data)
		return err
	})
	if err := errors.Join(err, tw.Close(), zw.Close()); err != nil {
		return nil, 0, err
	}
	if buf.Len() > maxRerunBytes {
		return nil, 0, fmt.Errorf("%s/ packs to %d bytes, over the %d-byte limit", filepath.Base(dir), buf.Len(), maxRerunBytes)
	}
	return buf.Bytes(), n, nil
}

// unpackRerun writes the state's files into dir; any other entry is refused before
// anything is written.
func unpackRerun(data []byte, dir string) (int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("not a packed re-run state: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	total := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("not a packed re-run state: %w", err)
		}
		name := h.Name
		queue, _, _ := strings.Cut(name, "/")
		if h.Typeflag != tar.TypeReg || path.Clean(name) != name || queue == "." || queue == ".." || !rerunFile.MatchString(name) {
			return 0, fmt.Errorf("entry %q is not a re-run state file", name)
		}
		body, err := io.ReadAll(io.LimitReader(tr, maxRerunBytes+1))
		if err != nil {
			return 0, err
		}
		if total += len(body); total > maxRerunBytes {
			return 0, fmt.Errorf("over the %d-byte limit unpacked", maxRerunBytes)
		}
		files[name] = body
	}
	// Never through a link a pull request committed there (docs/reruns.md#links).
	root := filepath.Dir(dir)
	for name, body := range files {
		if err := safefs.WriteFile(root, filepath.Join(dir, filepath.FromSlash(name)), body, 0o644); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}
