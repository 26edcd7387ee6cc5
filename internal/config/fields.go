package config

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// FieldError is a config line that cannot be split into words; Col is the 1-based byte column (0 when unknown).
type FieldError struct {
	Col int
	Msg string
}

func (e *FieldError) Error() string {
	if e.Col == 0 {
		return e.Msg
	}
	return fmt.Sprintf("column %d: %s", e.Col, e.Msg)
}

// SplitFields splits a config line into words as a POSIX shell splits a simple command, with no expansion, so a
// value may hold spaces and TE's plain lines read as before. The lexer is mvdan.cc/sh (docs/adapters.md says why).
// $VAR, $(…), `…` and unquoted | ; & < > ( ) are refused: the config is read where sgpu-queue runs, not the suite.
func SplitFields(line string) ([]string, error) {
	var fields []string
	var bad *FieldError
	p := syntax.NewParser(syntax.Variant(syntax.LangPOSIX))
	err := p.Words(strings.NewReader(line), func(w *syntax.Word) bool {
		s, ferr := wordValue(w)
		if ferr != nil {
			bad = ferr
			return false
		}
		fields = append(fields, s)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, parseError(err)
	}
	return fields, nil
}

// wordValue is the word with its quotes removed, or what in it is not a plain word.
func wordValue(w *syntax.Word) (string, *FieldError) {
	var b strings.Builder
	dollar := false // the part before ended in an unquoted $
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			unescape(&b, p.Value, false)
		case *syntax.SglQuoted:
			if p.Dollar || dollar {
				return "", refused(p, "$'…' (a bash quote)")
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || dollar {
				return "", refused(p, `$"…" (a bash quote)`)
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", refused(inner, describe(inner))
				}
				unescape(&b, lit.Value, true)
			}
		default:
			return "", refused(part, describe(part))
		}
		lit, ok := part.(*syntax.Lit)
		dollar = ok && endsInDollar(lit.Value)
	}
	return b.String(), nil
}

// unescape drops the backslashes that quote the next character: every one outside double quotes,
// inside only before $ ` " \.
func unescape(b *strings.Builder, s string, inDouble bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (!inDouble || strings.IndexByte("$`\"\\", s[i+1]) >= 0) {
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
}

// endsInDollar reports whether s ends in an unquoted $: POSIX and bash read $'…' differently, and neither is meant.
func endsInDollar(s string) bool {
	if !strings.HasSuffix(s, "$") {
		return false
	}
	n := 0
	for i := len(s) - 2; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

func describe(n syntax.Node) string {
	switch n.(type) {
	case *syntax.ParamExp:
		return "a $ variable"
	case *syntax.CmdSubst:
		return "a command substitution"
	case *syntax.ArithmExp:
		return "an arithmetic expansion"
	default:
		return "a shell expansion"
	}
}

func refused(n syntax.Node, what string) *FieldError {
	return &FieldError{
		Col: int(n.Pos().Col()),
		Msg: fmt.Sprintf("%s: config lines are not expanded; quote the word with '…' to pass it as written", what),
	}
}

// parseError turns the shell parser's error into a FieldError with a hint.
func parseError(err error) *FieldError {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		msg := pe.Text
		if pe.Incomplete {
			msg += ": close the quote on the same line"
		} else {
			msg += ": outside quotes | ; & < > ( ) are shell operators; quote the word with '…' to pass it as written"
		}
		return &FieldError{Col: int(pe.Pos.Col()), Msg: msg}
	}
	return &FieldError{Msg: err.Error()}
}

// QuoteWords writes words as a config line or a POSIX shell reads them back; a NUL is written with Go's escapes.
func QuoteWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if optionValue(w) {
			out[i] = w // --show-only=json-v1 reads as itself: no quotes to wade through
			continue
		}
		q, err := syntax.Quote(w, syntax.LangPOSIX)
		if err != nil {
			q = fmt.Sprintf("%q", w)
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

// optionValue reports whether w's only special character is a '=' that cannot start an assignment
// ("--show-only=json-v1"), which syntax.Quote would quote needlessly.
func optionValue(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || syntax.ValidName(name) {
		return false
	}
	q, err := syntax.Quote(strings.ReplaceAll(w, "=", "_"), syntax.LangPOSIX)
	return err == nil && q == strings.ReplaceAll(w, "=", "_")
}
