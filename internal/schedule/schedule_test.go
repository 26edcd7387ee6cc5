package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/weights"
)

func names(items []Item) string {
	var s []string
	for _, it := range items {
		s = append(s, it.Key())
	}
	return strings.Join(s, " ")
}

func TestWeighAndOrder(t *testing.T) {
	tab := weights.New()
	tab.Set("torch/a", 10)
	tab.Set("torch/b", 30)
	tab.Set("torch/c", 10)
	tab.Set("core", 20)
	items := []Item{
		{ItemID: record.ItemID{Label: "core"}, Seq: 0},
		{ItemID: record.ItemID{Label: "torch", Tag: "a"}, Seq: 1},
		{ItemID: record.ItemID{Label: "torch", Tag: "new1"}, Seq: 2},
		{ItemID: record.ItemID{Label: "torch", Tag: "b"}, Seq: 3},
		{ItemID: record.ItemID{Label: "torch", Tag: "c"}, Seq: 4},
		{ItemID: record.ItemID{Label: "torch", Tag: "new2"}, Seq: 5},
	}
	Weigh(items, tab, DefaultWeight)
	Order(items)
	want := "torch/new1 torch/new2 torch/b core torch/a torch/c"
	if got := names(items); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
	if items[0].Known || items[0].Weight != DefaultWeight {
		t.Errorf("unknown item weighed %+v", items[0])
	}
}

// An unknown item goes first even when a known weight is larger than the default.
func TestOrderUnknownFirstWhateverTheDefault(t *testing.T) {
	items := []Item{{ItemID: record.ItemID{Label: "big"}, Weight: 5000, Known: true, Seq: 0}, {ItemID: record.ItemID{Label: "new"}, Weight: 100, Seq: 1}}
	Order(items)
	if items[0].Label != "new" {
		t.Errorf("order %s", names(items))
	}
}

func TestLowerBound(t *testing.T) {
	tests := []struct {
		weights []float64
		unknown int
		n       int
		want    float64
	}{
		{[]float64{10, 10, 10, 10}, 0, 2, 20},
		{[]float64{100, 1, 1}, 0, 4, 100},
		{[]float64{10, 10}, 3, 2, 10},
		{nil, 2, 4, 0},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var items []Item
			for _, w := range tt.weights {
				items = append(items, Item{Weight: w, Known: true})
			}
			for j := 0; j < tt.unknown; j++ {
				items = append(items, Item{Weight: DefaultWeight})
			}
			b := LowerBound(items, tt.n)
			if b.Seconds != tt.want || b.Unknown != tt.unknown || b.Known != len(tt.weights) {
				t.Errorf("bound = %+v, want %v", b, tt.want)
			}
		})
	}
	if got := BoundOf([]float64{3, 3, 3, 9}, 2); got != 9 {
		t.Errorf("BoundOf = %v", got)
	}
}

func TestPullQueue(t *testing.T) {
	q := NewPull([]int{4, 2, 7})
	if q.Len() != 3 {
		t.Fatalf("len %d", q.Len())
	}
	var got []int
	for {
		i, ok := q.Next(0)
		if !ok {
			break
		}
		got = append(got, i)
	}
	if fmt.Sprint(got) != "[4 2 7]" {
		t.Errorf("order %v", got)
	}
}

func TestPullRequeueAvoids(t *testing.T) {
	q := NewPull([]int{0, 1})
	a, _ := q.Next(0) // 0 on slot 0
	q.Requeue(a, 0)   // failed there: retry elsewhere
	if i, _ := q.Next(0); i != 1 {
		t.Errorf("slot 0 got %d, want the next fresh item 1", i)
	}
	if _, ok := q.Next(0); ok {
		t.Error("slot 0 got the retry it must avoid")
	}
	if q.Len() != 1 {
		t.Errorf("len %d", q.Len())
	}
	if i, ok := q.Next(1); !ok || i != 0 {
		t.Errorf("slot 1 got %d,%v want the retry", i, ok)
	}
	q.Requeue(5, 1)
	if i, ok := q.Next(AnySlot); !ok || i != 5 {
		t.Errorf("AnySlot got %d,%v", i, ok)
	}
}
