// Package textfmt formats durations and untrusted strings alike in the console, the report and the annotations.
package textfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dur formats seconds: "0.4s", "12s", "4m05s", "1h02m"; "?" for NaN and ±Inf.
func Dur(secs float64) string {
	switch {
	case math.IsNaN(secs) || math.IsInf(secs, 0):
		return "?"
	case secs < 10:
		return strconv.FormatFloat(secs, 'f', 1, 64) + "s"
	case secs < 600:
		return fmt.Sprintf("%.0fs", secs)
	case secs < 3600:
		m := int(secs) / 60
		return fmt.Sprintf("%dm%02ds", m, int(secs)-60*m)
	default:
		h := int(secs) / 3600
		return fmt.Sprintf("%dh%02dm", h, (int(secs)-3600*h)/60)
	}
}

// Printable quotes a string with spaces, control characters or non-UTF-8 bytes (a raw 0x9b is a CSI to some
// terminals), or a leading quote, so a hostile tag cannot rewrite the terminal and always reads back.
func Printable(s string) string {
	if !utf8.ValidString(s) || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Count is n and a noun that takes an s in the plural: "1 GPU", "2 GPUs", "0 runners".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// OneLine folds every run of white space into one blank: an outside message as one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s at a rune boundary so that s plus note fits limit bytes; s unchanged when it fits.
func Truncate(s string, limit int, note string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	if len(note) > limit {
		note = ""
	}
	cut := limit - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + note
}
