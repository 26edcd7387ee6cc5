package schedule

import "math"

// minTree is a segment tree of the least value over positions, to find the first
// position from lo whose value is at most x in O(log n).
type minTree struct {
	n int       // leaves, a power of two
	v []float64 // v[1] the root; leaves at n … 2n−1
}

func newMinTree(size int) *minTree {
	n := 1
	for n < size {
		n *= 2
	}
	t := &minTree{n: n, v: make([]float64, 2*n)}
	for i := range t.v {
		t.v[i] = math.Inf(1)
	}
	return t
}

func (t *minTree) set(p int, x float64) {
	i := p + t.n
	t.v[i] = x
	for i /= 2; i >= 1; i /= 2 {
		t.v[i] = min(t.v[2*i], t.v[2*i+1])
	}
}

// first returns the least position ≥ lo whose value is ≤ x, or −1.
func (t *minTree) first(lo int, x float64) int {
	if lo >= t.n {
		return -1
	}
	return t.find(1, 0, t.n, lo, x)
}

func (t *minTree) find(node, l, r, lo int, x float64) int {
	if r <= lo || t.v[node] > x {
		return -1
	}
	if r-l == 1 {
		return l
	}
	m := (l + r) / 2
	if p := t.find(2*node, l, m, lo, x); p >= 0 {
		return p
	}
	return t.find(2*node+1, m, r, lo, x)
}
