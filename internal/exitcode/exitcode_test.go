package exitcode

import "testing"

func TestFromItem(t *testing.T) {
	tests := []struct{ item, want int }{
		{1, 1}, {3, 3}, {124, 124}, {137, 137}, {139, 139}, {255, 255},
		{Usage, Failed}, {Internal, Failed}, // the tool's own codes keep one meaning
		{0, Failed}, {-1, Failed}, // a failed item whose code says nothing
		{256, 255}, {1000, 255},
	}
	for _, tt := range tests {
		if got := FromItem(tt.item); got != tt.want {
			t.Errorf("FromItem(%d) = %d, want %d", tt.item, got, tt.want)
		}
	}
}
