package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Version is the plan file's format; Read refuses any other.
const Version = 1

// The rules a plan records (docs/runners.md).
const (
	RuleText = "LPT over the shards' GPU-seconds (width × weight), refined on each shard's wall clock replayed with the default policy"
	HashText = "shard = FNV-1a 64 of the key's bytes mod shards, plus 1"
)

// HashShard is the shard of an item the plan does not know: FNV-1a of its key modulo shards, plus 1,
// so every job agrees alone.
func HashShard(key string, shards int) int {
	if shards < 1 {
		return 0
	}
	h := fnv.New64a()
	io.WriteString(h, key)
	return int(h.Sum64()%uint64(shards)) + 1
}

// Identity names the weight table a plan was made from.
type Identity struct {
	Store string `json:"store"` // where it was read: a path, or a cache key
	Arch  string `json:"arch"`
	Level string `json:"level"`
	// SHA256 is of the table as Format writes it, so comments and order do not change the identity.
	SHA256 string `json:"sha256"`
	Keys   int    `json:"keys"`
}

// Plan is the plan file: which shard runs which items; shards are numbered from 1.
type Plan struct {
	Version int      `json:"version"`
	Weights Identity `json:"weights"`
	// ItemsFrom is where the item list came from: "weights" or the --items file.
	ItemsFrom string  `json:"items_from"`
	GPUs      int     `json:"gpus_per_shard"`
	Rule      string  `json:"rule"`
	Hash      string  `json:"hash"`
	Items     int     `json:"items"`
	Unknown   int     `json:"unknown_items"`
	Estimate  float64 `json:"unknown_estimate_seconds"`
	// Priors counts the items the table lacks planned by a prior (docs/weights.md); absent when none.
	Priors      int     `json:"prior_items,omitempty"`
	Work        float64 `json:"work_gpu_seconds"`
	Largest     string  `json:"largest_item"`
	LargestSecs float64 `json:"largest_seconds"`
	Bound       float64 `json:"bound_seconds"`
	Wall        float64 `json:"predicted_wall_seconds"`
	Shards      []Shard `json:"shards"`
	index       map[string]int
}

// Shard is one shard of a plan.
type Shard struct {
	Shard int     `json:"shard"` // 1 … K
	Items int     `json:"items"`
	Work  float64 `json:"work_gpu_seconds"`
	Bound float64 `json:"bound_seconds"` // max(work/GPUs, its longest item)
	Wall  float64 `json:"predicted_wall_seconds"`
	// Keys are its items' weight keys, sorted; a non-UTF-8 key is not listed (JSON cannot carry it)
	// and goes by HashShard.
	Keys []string `json:"keys"`
}

// New makes the plan of an assignment of items.
func New(items []schedule.Item, a *Assignment, id Identity, itemsFrom string) *Plan {
	p := &Plan{
		Version: Version, Weights: id, ItemsFrom: itemsFrom, GPUs: a.GPUs, Rule: RuleText, Hash: HashText,
		Items: len(items), Unknown: a.Unknown, Priors: a.Priors, Estimate: ms(a.Estimate), Work: ms(a.Total),
		LargestSecs: ms(a.Largest), Bound: ms(a.Bound), Shards: make([]Shard, a.Shards),
	}
	if a.LargestItem >= 0 {
		p.Largest = items[a.LargestItem].Key()
		if !utf8.ValidString(p.Largest) {
			p.Largest = strconv.Quote(p.Largest) // JSON would garble it
		}
	}
	longest := make([]float64, a.Shards)
	for s := range p.Shards {
		p.Shards[s] = Shard{Shard: s + 1, Items: a.Count[s], Work: ms(a.Work[s]), Wall: ms(a.Wall[s]), Keys: []string{}}
		p.Wall = max(p.Wall, p.Shards[s].Wall)
	}
	for i, it := range items {
		s := a.Of[i]
		longest[s] = max(longest[s], weightOf(it, a))
		if key := it.Key(); utf8.ValidString(key) {
			p.Shards[s].Keys = append(p.Shards[s].Keys, key)
		}
	}
	for s := range p.Shards {
		slices.Sort(p.Shards[s].Keys)
		p.Shards[s].Bound = ms(max(a.Work[s]/float64(a.GPUs), longest[s]))
	}
	p.buildIndex()
	return p
}

func weightOf(it schedule.Item, a *Assignment) float64 {
	if it.Estimated() {
		return it.Weight
	}
	return a.Estimate
}

// ms rounds seconds to the millisecond, as the log dir's files do.
func ms(v float64) float64 { return math.Round(v*1000) / 1000 }

func (p *Plan) buildIndex() {
	p.index = map[string]int{}
	for _, s := range p.Shards {
		for _, k := range s.Keys {
			p.index[k] = s.Shard
		}
	}
}

// ShardOf is the shard that runs key: the plan's, else its HashShard; 0 only for a plan without shards.
func (p *Plan) ShardOf(key string) int {
	if s, ok := p.index[key]; ok {
		return s
	}
	return HashShard(key, len(p.Shards))
}

// Planned reports whether the plan lists key.
func (p *Plan) Planned(key string) bool {
	_, ok := p.index[key]
	return ok
}

// Write writes the plan as indented JSON: the same plan gives the same bytes.
func (p *Plan) Write(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile writes the plan atomically and returns the bytes written.
func (p *Plan) WriteFile(path string) ([]byte, error) {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), atomicfile.Write(path, b.Bytes(), 0o644)
}

// maxPlanBytes bounds what Read takes, so that a wrong file fails fast.
const maxPlanBytes = 256 << 20

// Read reads a plan file; every error is one line naming the file and the fix.
func Read(r io.Reader, name string) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", name, err)
	}
	if len(data) > maxPlanBytes {
		return nil, fmt.Errorf("plan %s: larger than %d MiB, not a plan file", name, maxPlanBytes>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("plan %s: empty; give the file sgpu-queue plan wrote", name)
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("plan %s: not JSON at byte %d: %s; give the file sgpu-queue plan wrote", name, se.Offset,
				textfmt.OneLine(se.Error()))
		case errors.As(err, &te):
			where := "the file"
			if te.Field != "" {
				where = fmt.Sprintf("field %q", te.Field)
			}
			return nil, fmt.Errorf("plan %s: not a plan file: %s holds a JSON %s where %s belongs; give the file sgpu-queue plan wrote", name,
				where, te.Value, kindName(te.Type.Kind()))
		}
		return nil, fmt.Errorf("plan %s: not a plan file (%s); give the file sgpu-queue plan wrote", name, textfmt.OneLine(err.Error()))
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("plan %s: %w", name, err)
	}
	p.buildIndex()
	return &p, nil
}

// check says what makes p unusable.
func (p *Plan) check() error {
	switch {
	case p.Version != Version:
		return fmt.Errorf("format version %d, this sgpu-queue reads version %d: make the plan with the same sgpu-queue as the shards", p.Version,
			Version)
	case len(p.Shards) < 1 || len(p.Shards) > MaxShards:
		return fmt.Errorf("%d shards: want from 1 to %d", len(p.Shards), MaxShards)
	case p.GPUs < 1:
		return fmt.Errorf("gpus_per_shard %d: want at least 1", p.GPUs)
	}
	seen := map[string]int{}
	for k, s := range p.Shards {
		if s.Shard != k+1 {
			return fmt.Errorf("shard number %d in place %d: want the shards numbered 1 … %d in order", s.Shard, k+1, len(p.Shards))
		}
		for _, key := range s.Keys {
			if key == "" {
				return fmt.Errorf("shard %d lists an empty key", s.Shard)
			}
			if first, dup := seen[key]; dup {
				return fmt.Errorf("key %q is listed by shard %d and by shard %d: an item runs on one shard", key, first, s.Shard)
			}
			seen[key] = s.Shard
		}
	}
	return nil
}

// kindName is how a JSON value of kind k is called, with its article.
func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a number"
}
