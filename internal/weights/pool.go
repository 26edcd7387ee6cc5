package weights

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
)

// poolSep joins a pool-sized item's key and its pool size: "<label>/<tag>@g8" (docs/files.md "The weight table").
const poolSep = "@g"

// PoolKey is the stored key of a pool-sized item's weight on n GPUs: such an item sizes itself to the box,
// so its time on 4 GPUs says nothing of its time on 8.
func PoolKey(key string, n int) string { return key + poolSep + strconv.Itoa(n) }

// cutPoolKey splits a PoolKey; ok is false for any other key.
func cutPoolKey(k string) (key string, n int, ok bool) {
	i := strings.LastIndex(k, poolSep)
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(k[i+len(poolSep):])
	if err != nil || n < 1 || strconv.Itoa(n) != k[i+len(poolSep):] {
		return "", 0, false
	}
	return k[:i], n, true
}

// Pool is a stored table as a run on N GPUs sees it: View has plain keys, with the pool-sized items' weights
// for N; the other sizes' wait aside until Join.
type Pool struct {
	View   *Table
	n      int
	pooled map[string]bool
	aside  *Table
}

// SplitPool is stored as a run on n GPUs sees it, pooled taking the whole pool; a pooled item's plain key
// (of an unknown pool size) is dropped and learned anew.
func SplitPool(stored *Table, pooled map[string]bool, n int) *Pool {
	p := &Pool{View: New(), n: n, pooled: pooled, aside: New()}
	p.View.learned = slices.Clone(stored.learned) // a merge's record travels with the table
	for k, v := range stored.w {
		key, m, ok := cutPoolKey(k)
		switch {
		case ok && m == n && pooled[key]:
			p.View.w[key] = v
		case ok:
			p.aside.w[k] = v
		case !pooled[k]:
			p.View.w[k] = v
		}
	}
	return p
}

// Over is p's split of another stored table (Rewrite's re-read under the lock).
func (p *Pool) Over(stored *Table) *Pool { return SplitPool(stored, p.pooled, p.n) }

// PooledKeys are the keys of stored kept per pool size (PoolKey): the items that take a whole runner.
func PooledKeys(stored *Table) map[string]bool {
	out := map[string]bool{}
	for k := range stored.w {
		if key, _, ok := cutPoolKey(k); ok {
			out[key] = true
		}
	}
	return out
}

// Join is the table to store after the run learned into p.View, pruning what the census no longer lists.
func (p *Pool) Join(census Census) (stored *Table, pruned []string) {
	stored = New()
	stored.learned = slices.Clone(p.View.learned)
	for k, v := range p.View.w {
		if p.pooled[k] {
			k = PoolKey(k, p.n)
		}
		stored.w[k] = v
	}
	for k, v := range p.aside.w {
		key, _, _ := cutPoolKey(k)
		if keys, has := census[record.ParseItemID(key).Label]; has && keys != nil && !keys[key] {
			pruned = append(pruned, k)
			continue
		}
		stored.w[k] = v
	}
	return stored, pruned
}

// TEPath is TE's table of a queue (run_queue.sh); sgpu-queue reads it (Seed), never writes it.
func TEPath(repoRoot, queue, arch, level string, gpus int) string {
	return filepath.Join(repoRoot, "ci-weights", "test_weights."+queue+"."+arch+".l"+level+".g"+strconv.Itoa(gpus)+".txt")
}

// Seed fills t's missing keys from TE's table at path, so the first run after switching from TE's queue is ordered.
// It returns what it added (for Table.Fill) and warnings; a missing or unreadable table adds nothing.
func Seed(ctx context.Context, t *Table, path string, pooled map[string]bool, gpus int) (*Table, []string) {
	te, warns, _ := File{Path: path}.Load(ctx)
	added := New()
	for k, v := range te.w {
		if pooled[k] {
			k = PoolKey(k, gpus)
		}
		if _, has := t.w[k]; !has {
			t.w[k] = v
			added.w[k] = v
		}
	}
	return added, warns
}

// Fill sets the weights of from that t lacks and returns how many it set.
func (t *Table) Fill(from *Table) int {
	n := 0
	for k, v := range from.w {
		if _, has := t.w[k]; !has {
			t.w[k] = v
			n++
		}
	}
	return n
}
