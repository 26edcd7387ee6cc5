package shard

import (
	"fmt"
	"strconv"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Advice says what one more runner would buy (k runners take wall, k+1 next); a saving under 1 % (or 1 s)
// is said to be none, naming the longest item when it sets the wall clock.
func Advice(k int, wall, next float64, largestKey string, largest float64) string {
	head := article(k+1) + " " + Ordinal(k+1) + " runner would save"
	saving := wall - next
	if saving >= 1 && saving >= 0.01*wall {
		return fmt.Sprintf("%s %s (%s %%): %s instead of %s", head, textfmt.Secs(saving), pct1(saving/wall), textfmt.Secs(next), textfmt.Secs(wall))
	}
	what := "nothing"
	if saving >= 0.5 {
		what = fmt.Sprintf("only %s (%s %%)", textfmt.Secs(saving), pct1(saving/wall))
	}
	switch {
	case largest <= 0 || next > largest*(1+minGain):
	case largestKey != "":
		return fmt.Sprintf("%s %s: the largest item, %s (%s), sets the wall clock; split it to go further", head, what,
			textfmt.Printable(largestKey), textfmt.Secs(largest))
	default:
		return fmt.Sprintf("%s %s: the longest item (%s) sets the wall clock; split it to go further", head, what, textfmt.Secs(largest))
	}
	return head + " " + what
}

// article is "an" before an ordinal said with a vowel first (8th, 11th, 80th…), else "a".
func article(n int) string {
	if d := strconv.Itoa(n); d[0] == '8' || n == 11 || n == 18 {
		return "an"
	}
	return "a"
}

// Ordinal is "1st", "2nd", "3rd", "4th", … "11th", "12th", "13th", "21st".
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

func pct1(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) }
