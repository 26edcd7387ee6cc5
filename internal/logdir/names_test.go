package logdir

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
)

// TE's layout is kept for ordinary labels and tags; attempts take a form no tag has.
func TestItemFileNames(t *testing.T) {
	l := Layout{Root: "/logs"}
	tests := []struct{ got, want string }{
		{l.ItemLog("torch", "test_numerics.ck.amax+triton"), "/logs/items/torch.test_numerics.ck.amax+triton.log"},
		{l.ItemRC("jax", "a=b-c"), "/logs/items/jax.a=b-c.log.rc"},
		{l.ItemLog("core", ""), "/logs/items/core.whole.log"},
		{ItemLogRel("torch", "mxfp4..ck"), "items/torch.mxfp4..ck.log"},
		{l.ItemAttemptLog("torch", "x", 1), "/logs/items/torch.x@attempt1.log"},
		{l.ItemAttemptRC("torch", "x", 12), "/logs/items/torch.x@attempt12.log.rc"},
		{l.ItemCwd("torch", "x"), "/logs/cwd/torch.x"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
	// The collisions of the old layout: tag "x"'s attempt 1 and tag "x.attempt1".
	if l.ItemAttemptLog("d", "x", 1) == l.ItemLog("d", "x.attempt1") {
		t.Error("an attempt log is another tag's log")
	}
}

func TestParseItemFile(t *testing.T) {
	for _, name := range []string{"", ".log", "torch.log", "a.b.log.txt", "a.x@attempt0.log", "a.x@attempt01.log",
		"a.x@attempt.log", "a.x@attemptx.log", "a.x~zz.log", "a.x~0123456789ABCDEF.log", "notes.txt", ".a.log", "a/b.c.log",
		"a.x.xml", "a.x.xml.partial", "a.x@attempt1.xml.rc", "a.x@attempt1.partial", "a.x@attempt1.log.xml"} {
		if f, ok := ParseItemFile(name); ok {
			t.Errorf("ParseItemFile(%q) = %+v, want no item file", name, f)
		}
	}
	for name, want := range map[string]ItemFile{
		"torch.a.b@attempt3.log.rc":      {Base: "torch.a.b", Attempt: 3, RC: true},
		"torch.a.b@attempt3.xml":         {Base: "torch.a.b", Attempt: 3, JUnit: ".xml"},
		"torch.a.b@attempt2.xml.partial": {Base: "torch.a.b", Attempt: 2, JUnit: ".xml.partial"},
	} {
		if f, ok := ParseItemFile(name); !ok || f != want {
			t.Errorf("ParseItemFile(%q) = %+v %v, want %+v", name, f, ok, want)
		}
	}
	l := Layout{Root: "/l"}
	if f, ok := ParseItemFile(filepath.Base(l.ItemAttemptJUnit("torch", "a.b", 4))); !ok || f.Attempt != 4 || f.JUnit != ".xml" {
		t.Errorf("ItemAttemptJUnit's name reads back as %+v %v", f, ok)
	}
}

// fuzzLabel is the label grammar the config enforces (internal/config): the encoding
// is injective over it.
func fuzzLabel(l string) bool {
	if l == "" || len(l) > MaxLabel || l[0] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// No two (label, tag, attempt, log-or-rc) share an item file name, and every name
// reads back into its parts and fits a file name. The proof: ParseItemFile splits a
// name uniquely (the suffix, then the attempt after '@', which no label or safetag
// holds, then the label at the first '.', which no label holds), and SafeTag is
// injective: a clean tag is itself, any other carries a hash of the tag after '~'.
func FuzzItemNamesInjective(f *testing.F) {
	f.Add("a", "b.c", uint16(0), false, "a", "b_c", uint16(0), false)
	f.Add("d", "x", uint16(1), false, "d", "x.attempt1", uint16(0), false)
	f.Add("d", "x", uint16(1), false, "d", "x@attempt1", uint16(0), false)
	f.Add("d", "x", uint16(0), true, "d", "x.log", uint16(0), false)
	f.Add("core", "", uint16(0), false, "core", "whole", uint16(0), false)
	f.Add("t", "../evil tag/x", uint16(2), true, "t", ".._evil_tag_x", uint16(2), true)
	f.Fuzz(func(t *testing.T, l1, t1 string, a1 uint16, r1 bool, l2, t2 string, a2 uint16, r2 bool) {
		if !fuzzLabel(l1) || !fuzzLabel(l2) {
			return
		}
		n1, n2 := ItemFileName(l1, t1, int(a1), r1), ItemFileName(l2, t2, int(a2), r2)
		if n1 == n2 && (l1 != l2 || t1 != t2 || a1 != a2 || r1 != r2) {
			t.Fatalf("(%q, %q, %d, %v) and (%q, %q, %d, %v) share %q", l1, t1, a1, r1, l2, t2, a2, r2, n1)
		}
		if len(n1) > MaxNameBytes || strings.ContainsAny(n1, "/\x00") {
			t.Fatalf("name %q (%d bytes)", n1, len(n1))
		}
		got, ok := ParseItemFile(n1)
		if want := (ItemFile{Base: l1 + "." + SafeTag(t1), Attempt: int(a1), RC: r1}); !ok || got != want {
			t.Fatalf("ParseItemFile(%q) = %+v %v, want %+v", n1, got, ok, want)
		}
		s := SafeTag(t1)
		if clean, hash, hashed := strings.Cut(s, "~"); hashed {
			sum := sha256.Sum256([]byte(t1))
			if hash != hex.EncodeToString(sum[:hashLen/2]) || len(clean) > maxSafe {
				t.Fatalf("SafeTag(%q) = %q does not carry the tag's hash", t1, s)
			}
		} else if s != t1 && !(t1 == "" && s == whole) {
			t.Fatalf("SafeTag(%q) = %q changed a clean tag", t1, s)
		}
	})
}
