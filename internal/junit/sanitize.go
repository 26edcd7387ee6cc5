package junit

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// xmlChar reports whether XML 1.0 allows r in a document at all (production
// [2] Char); no escaping makes the others legal.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// clean makes s storable in XML 1.0: characters XML forbids become visible
// "#xNN" text (pytest's convention, so a reader sees what the test printed
// instead of losing it), and invalid UTF-8 becomes U+FFFD. encoding/xml would
// otherwise turn them all into U+FFFD silently.
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !xmlChar(r) {
			ok = false
			break
		}
		i += n
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case !xmlChar(r):
			fmt.Fprintf(&b, "#x%02X", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
