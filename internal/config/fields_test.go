package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rocm/sgpu-queue/internal/golden"
	"mvdan.cc/sh/v3/syntax"
)

func TestSplitFields(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		// TE's lines and other unquoted lines read as white-space separated fields.
		{"examples  examples.log  opaque  .github/scripts/run_examples.sh", []string{"examples", "examples.log", "opaque", ".github/scripts/run_examples.sh"}},
		{"torch\ttorch.log\tlist\tci/pytorch.sh", []string{"torch", "torch.log", "list", "ci/pytorch.sh"}},
		{"  core core.log opaque ci/core.sh  ", []string{"core", "core.log", "opaque", "ci/core.sh"}},
		{"t t.log list,gpus=2 ci/x.sh --k=v a+b mxfp4..ck ~/x *.py [ab] ! { } if then", []string{"t", "t.log", "list,gpus=2", "ci/x.sh", "--k=v", "a+b", "mxfp4..ck", "~/x", "*.py", "[ab]", "!", "{", "}", "if", "then"}},
		{"", nil},
		{"   ", nil},
		// Quoting.
		{`u u.log pytest -k "not slow" tests/`, []string{"u", "u.log", "pytest", "-k", "not slow", "tests/"}},
		{`u u.log pytest 'dir with space/test_a.py' x`, []string{"u", "u.log", "pytest", "dir with space/test_a.py", "x"}},
		{`a dir\ with\ space/t.py`, []string{"a", "dir with space/t.py"}},
		{`a "it's" 'say "hi"' "a\"b" "back\\slash" "keep\q" '\n'`, []string{"a", "it's", `say "hi"`, `a"b`, `back\slash`, `keep\q`, `\n`}},
		{`a "" ''`, []string{"a", "", ""}},
		{`a pre"mid"'post'`, []string{"a", "premidpost"}},
		{`c c.log ctest -E 'Test(.*XTN|.*XNT)'`, []string{"c", "c.log", "ctest", "-E", "Test(.*XTN|.*XNT)"}},
		{`c c.log "ctest,setup=cmake -S a -B b && cmake --build b"`, []string{"c", "c.log", "ctest,setup=cmake -S a -B b && cmake --build b"}},
		{`a \$'x' "cost $" lone$ \$HOME '$HOME' "\$x"`, []string{"a", "$x", "cost $", "lone$", "$HOME", "$HOME", "$x"}},
		{`a trailing\`, []string{"a", `trailing\`}},
		// Comments start at a word.
		{"a b # the rest is a comment", []string{"a", "b"}},
		{"# a whole comment line", nil},
		{"a f#g", []string{"a", "f#g"}},
		{`a "#quoted"`, []string{"a", "#quoted"}},
		{"a é ü 测试", []string{"a", "é", "ü", "测试"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := SplitFields(tt.in)
			if err != nil {
				t.Fatalf("SplitFields(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SplitFields(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The messages a user gets for a line that cannot be split are pinned in
// testdata/fields.golden (go test -run TestSplitFieldsErrors -update rewrites it).
func TestSplitFieldsErrors(t *testing.T) {
	bad := []string{
		`u u.log pytest -k "not slow`,
		`u u.log pytest 'unclosed`,
		`a $HOME/x`,
		`a ${HOME}`,
		`a "$HOME"`,
		`a $(id)`,
		"a `id`",
		`a $((1+2))`,
		`a "x$(id)"`,
		`a $'\t'`,
		`a $"msg"`,
		`c c.log ctest -E Test(.*XTN|.*XNT)`,
		`a b|c`,
		`a b; rm -rf /`,
		`a b &`,
		`a b > out.log`,
		`a 2>&1`,
		`a <in`,
	}
	var b strings.Builder
	for _, in := range bad {
		got, err := SplitFields(in)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("SplitFields(%q) = %q, %v; want a *FieldError", in, got, err)
			continue
		}
		if fe.Col < 1 || fe.Col > len(in)+1 {
			t.Errorf("SplitFields(%q): column %d is outside the line", in, fe.Col)
		}
		fmt.Fprintf(&b, "%s\n\t%v\n", in, err)
	}
	golden.Check(t, "testdata/fields.golden", []byte(b.String()), *update)
}

// plain reports whether every byte of s reads the same to strings.Fields and to a
// shell: ASCII, no quoting, no operators, no expansion, no comment.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c < 0x20 && c != '\t' || c == 0x7f || strings.IndexByte("'\"\\$`|;&<>()#\n\r\v\f", c) >= 0 {
			return false
		}
	}
	return true
}

func FuzzSplitFields(f *testing.F) {
	for _, s := range []string{
		"torch     torch.log     list    ci/pytorch.sh",
		"core core.log opaque ci/core.sh # comment",
		`u u.log pytest -k "not slow" 'a b/t.py' c\ d`,
		`c c.log "ctest,setup=cmake -S a -B b,env=A=1" --test-dir build -E 'x|y'`,
		`a $HOME "$(id)" ${x} $'\t' a|b`,
		"a \"unclosed",
		"a\x00b \xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, err := SplitFields(line)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("SplitFields(%q): error %T %v, want a *FieldError", line, err, err)
			}
			if plain(line) {
				t.Fatalf("SplitFields(%q): %v; a plain line must split like strings.Fields", line, err)
			}
			return
		}
		if plain(line) {
			if want := strings.Fields(line); !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
				t.Fatalf("SplitFields(%q) = %q, strings.Fields = %q", line, got, want)
			}
		}
		// Quoting each field for a shell and splitting again gives the fields back.
		if !utf8.ValidString(line) {
			return
		}
		for _, w := range got {
			if _, qerr := syntax.Quote(w, syntax.LangPOSIX); qerr != nil {
				return // a field a POSIX shell cannot quote (a NUL byte)
			}
		}
		quoted := QuoteWords(got)
		again, err := SplitFields(quoted)
		if err != nil || !cmp.Equal(got, again, cmpopts.EquateEmpty()) {
			t.Fatalf("SplitFields(%q) = %q; quoted %q splits into %q, %v", line, got, quoted, again, err)
		}
	})
}

// QuoteWords quotes only what a shell would read otherwise: an option's "=value"
// stays plain, an assignment-shaped word and shell characters are quoted.
func TestQuoteWords(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"ctest", "--test-dir", "no build", "-E", "Test(.*XTN|.*XNT)", "--show-only=json-v1"}, `ctest --test-dir 'no build' -E 'Test(.*XTN|.*XNT)' --show-only=json-v1`},
		{[]string{"pytest,split=test,env=A=1", "-m", "not slow"}, `pytest,split=test,env=A=1 -m 'not slow'`},
		{[]string{"A=1", "--x=~/y", "--x=$HOME", "=v"}, `'A=1' '--x=~/y' '--x=$HOME' =v`},
		{[]string{"two\nlines"}, `"two\nlines"`},
	} {
		if got := QuoteWords(tc.words); got != tc.want {
			t.Errorf("QuoteWords(%q) = %s, want %s", tc.words, got, tc.want)
		}
	}
}
