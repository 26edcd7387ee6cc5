// Package textfmt formats durations and untrusted strings the same way in the console,
// the report and the action's annotations.
package textfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dur formats seconds: "0.4s", "12s", "4m05s", "1h02m"; "?" for what is not a
// number of seconds (NaN, ±Inf), which would otherwise print as garbage.
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

// Printable quotes a string that holds spaces, control characters or bytes that are
// not UTF-8 (a raw 0x9b is a CSI to some terminals), so a hostile tag cannot rewrite
// the terminal or be mistaken for two words. A string that starts with a quote is
// quoted too, so a printed name that starts with one always reads back by unquoting.
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

// OneLine folds every run of white space, line breaks included, into one blank:
// a message from outside (a tool's stderr, an API error) as one console or
// annotation line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
