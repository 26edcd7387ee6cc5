package cache

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeBlob: whatever a cache entry holds, decoding never panics, bounds its
// warnings, keeps them one line, and a table it accepts survives Format → decode
// unchanged and without warnings.
func FuzzDecodeBlob(f *testing.F) {
	for _, s := range []string{
		"", "# c\n", "a 1.0\n", "a/b 2.5\nc 3\n", "a\n", "\x00", "\xff", "a 1e9\n", "a -1\n",
		"a NaN\n", "\xef\xbb\xbfk 1.0\r\n", "k\t1.0\n", "a 1.0\nb x\nc 2.0\n", strings.Repeat("x y\n", 20),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 4096
		tb, warns, err := decodeBlob(data, "k", max)
		if err != nil {
			if tb != nil || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q with table %v", err, tb)
			}
			return
		}
		if len(warns) > maxParseWarnings+1 {
			t.Fatalf("%d warnings, cap is %d+1", len(warns), maxParseWarnings)
		}
		for _, w := range warns {
			if strings.ContainsAny(w, "\r\n") {
				t.Fatalf("warning not one line: %q", w)
			}
		}
		var b bytes.Buffer
		if err := tb.Format(&b); err != nil {
			t.Fatal(err)
		}
		if int64(b.Len()) > max {
			return // one decimal can lengthen a value ("1" → "1.0"); over the cap is a save error
		}
		again, warns2, err := decodeBlob(b.Bytes(), "k", max)
		if err != nil || len(warns2) != 0 {
			t.Fatalf("formatted table does not decode cleanly: %v %q\n%s", err, warns2, b.Bytes())
		}
		var b2 bytes.Buffer
		_ = again.Format(&b2)
		if b2.String() != b.String() {
			t.Fatalf("round trip changed the table:\n%s\n---\n%s", b.String(), b2.String())
		}
	})
}

// FuzzOneLine: a warning built from any text (a server's error body, an SDK
// message) is one line of valid UTF-8, bounded, and free of the token.
func FuzzOneLine(f *testing.F) {
	f.Add("plain", "tok.en.x")
	f.Add("a\nb\r\nc", "eyJhbGciOiJIUzI1NiJ9.eyJhYyI6IltdIn0.c2ln")
	f.Add("Bearer abc*abc", "abc*")
	f.Add("https://x/y?sig=tok", "tok")
	f.Add("ab…", "b…")
	f.Add(strings.Repeat("é", 500), "éé")
	f.Fuzz(func(t *testing.T, msg, token string) {
		got := oneLine(msg, token)
		if strings.ContainsAny(got, "\r\n") || strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 }) {
			t.Fatalf("not one clean line: %q", got)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxWarning {
			t.Fatalf("invalid or too long: %q", got)
		}
		if token != "" && strings.Contains(got, token) {
			t.Fatalf("token %q survives in %q", token, got)
		}
	})
}
