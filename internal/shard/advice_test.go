package shard_test

import (
	"testing"

	"github.com/rocm/sgpu-queue/internal/shard"
)

func TestAdvice(t *testing.T) {
	tests := []struct {
		k                   int
		wall, next, largest float64
		key, want           string
	}{
		{1, 1313, 1251, 1251, "core", "a 2nd runner would save 62 s (4.7 %): 1251 s instead of 1313 s"},
		{2, 1251, 1251, 1251, "core", "a 3rd runner would save nothing: the largest item, core (1251 s), sets the wall clock; split it to go further"},
		{3, 700, 690, 686, "", "a 4th runner would save 10 s (1.4 %): 690 s instead of 700 s"},
		{3, 686, 686, 686, "", "a 4th runner would save nothing: the longest item (686 s) sets the wall clock; split it to go further"},
		{10, 1000, 995, 100, "t/x", "an 11th runner would save only 5 s (0.5 %)"},
		{21, 1000, 1000.2, 100, "t/x", "a 22nd runner would save nothing"},
		{7, 1000, 1000, 100, "t/x", "an 8th runner would save nothing"},
		{17, 1000, 1000, 100, "t/x", "an 18th runner would save nothing"},
		{82, 1000, 1000, 100, "t/x", "an 83rd runner would save nothing"},
		{1, 60, 40, 40, "bad key\n", `a 2nd runner would save 20 s (33.3 %): 40 s instead of 60 s`},
		{1, 40.4, 40, 40, "bad key\n", `a 2nd runner would save nothing: the largest item, "bad key\n" (40 s), sets the wall clock; split it to go further`},
	}
	for _, tc := range tests {
		if got := shard.Advice(tc.k, tc.wall, tc.next, tc.key, tc.largest); got != tc.want {
			t.Errorf("Advice(%d, %g, %g, %q, %g)\n got %q\nwant %q", tc.k, tc.wall, tc.next, tc.key, tc.largest, got, tc.want)
		}
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th", 112: "112th"} {
		if got := shard.Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
