package logdir

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/rocm/sgpu-queue/internal/record"
)

// ListedTSV and the files below are what a shard run and a merge write besides a run's (docs/runners.md).
func (l Layout) ListedTSV() string { return l.path("queue", "listed.tsv") }
func (l Layout) PlanJSON() string  { return l.path("queue", "plan.json") }
func (l Layout) ShardsTSV() string { return l.path("queue", "shards.tsv") }

// FormatShards writes queue/shards.tsv: "label TAB item TAB shard" per item of a merged queue.
func FormatShards(rows map[record.ItemID]int, order []record.QueueRow) []byte {
	var b bytes.Buffer
	for _, q := range order {
		id := q.ItemID
		if s, ok := rows[id]; ok {
			b.WriteString(joinFields(id.Label, id.Column(), strconv.Itoa(s)))
		}
	}
	return b.Bytes()
}

// ParseShards reads queue/shards.tsv; an unreadable row is skipped with a warning.
func ParseShards(data []byte, r *record.Run) (map[record.ItemID]int, []string) {
	type row struct {
		id    record.ItemID
		shard int
	}
	rows, warns := parseRows(bytes.NewReader(data), "shards.tsv", func(f []string) (row, error) {
		if len(f) != 3 {
			return row{}, fmt.Errorf("want 3 columns (label, item, shard), got %d", len(f))
		}
		s, err := strconv.Atoi(f[2])
		switch {
		case err != nil || s < 1:
			return row{}, fmt.Errorf("shard %q is not a number from 1", f[2])
		case f[0] == "" || f[1] == "":
			return row{}, fmt.Errorf("empty label or item")
		}
		return row{r.ItemOf(f[0], f[1]), s}, nil
	})
	out := make(map[record.ItemID]int, len(rows))
	for _, x := range rows {
		out[x.id] = x.shard
	}
	return out, warns
}
