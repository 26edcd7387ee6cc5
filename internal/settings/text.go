package settings

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Form is where a knob's text is read; each writes names, code and docs pages its own way.
type Form int

const (
	// CLIHelp is a flag's line of --help: another option is --name.
	CLIHelp Form = iota
	// ActionYML is an action.yml description: sentences, another input by its bare name.
	ActionYML
	// Markdown is a docs/action.md cell: names and code in backticks, docs pages as links.
	Markdown
)

var (
	// option is {name}: another flag or input.
	option = regexp.MustCompile(`\{([a-z][a-z0-9-]*)\}`)
	// citation is docs/<page>.md[#<anchor>] as mdcheck finds it, so a knob's citation is checked like a comment's.
	citation = regexp.MustCompile(`docs/([a-z0-9-]+)\.md((?:#[a-z0-9_-]*[a-z0-9_])?)`)
)

// Text writes s, a knob's text, in form f: {name} is another flag or input, `code` is code (quoted in plain forms
// when it holds ';'), and docs/<page>.md#<anchor> a docs citation.
func Text(s string, f Form) string {
	var b strings.Builder
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 {
			b.WriteString(code(part, f))
			continue
		}
		part = option.ReplaceAllStringFunc(part, func(m string) string {
			name := m[1 : len(m)-1]
			switch f {
			case CLIHelp:
				return "--" + name
			case Markdown:
				return "`" + name + "`"
			}
			return name
		})
		if f == Markdown {
			part = citation.ReplaceAllString(part, "[${1}.md](${1}.md${2})")
			part = strings.ReplaceAll(part, "|", `\|`)
		}
		b.WriteString(part)
	}
	return b.String()
}

// code is a code span in form f.
func code(s string, f Form) string {
	switch {
	case f == Markdown:
		return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
	case !strings.Contains(s, ";"):
		return s
	case strings.Contains(s, "'"):
		return `"` + s + `"`
	}
	return "'" + s + "'"
}

// Help is the knob's --help line: usage, CLI-only notes and default.
func (k Knob) Help() string {
	s := Text(k.Usage, CLIHelp)
	if k.CLI != "" {
		s += "; " + Text(k.CLI, CLIHelp)
	}
	if k.Kind == Lines {
		s += " (repeatable)"
	}
	switch {
	case k.Empty != "":
		s += " (default: " + Text(k.Empty, CLIHelp) + ")"
	case k.Default != "" && k.Default != "false" && (k.Default != "0" || k.Kind == Number):
		s += " (default " + k.Default + ")"
	}
	return s
}

// Describe is the knob for the action's users: usage, their notes, how paths and lists are read, and what an empty
// default means in action.yml. ActionYML writes sentences, Markdown a table cell.
func (k Knob) Describe(f Form) string {
	parts := []string{k.Usage, k.Action}
	switch {
	case k.Path && k.Kind == Lines:
		parts = append(parts, "paths relative to the workspace, separated by spaces, commas or lines; globs allowed")
	case k.Path:
		parts = append(parts, "relative to the workspace")
	case k.Kind == Lines:
		parts = append(parts, "one per line")
	}
	if f == ActionYML && k.Empty != "" {
		parts = append(parts, "default: "+k.Empty)
	}
	var out []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		t := Text(p, f)
		if f == ActionYML {
			t = sentence(p, t)
		}
		out = append(out, t)
	}
	if f == ActionYML {
		return strings.Join(out, " ")
	}
	return strings.Join(out, "; ")
}

// DefaultCell is docs/action.md's default column: what an empty default means, else the default.
func (k Knob) DefaultCell() string {
	switch {
	case k.Empty != "":
		return Text(k.Empty, Markdown)
	case k.Default != "":
		return code(k.Default, Markdown)
	}
	return ""
}

// sentence ends t with a period, capitalised when src starts with a lowercase word.
func sentence(src, t string) string {
	if r, n := utf8.DecodeRuneInString(t); unicode.IsLower(r) && src != "" && unicode.IsLower(rune(src[0])) {
		t = string(unicode.ToUpper(r)) + t[n:]
	}
	if !strings.HasSuffix(t, ".") {
		t += "."
	}
	return t
}

// CheckText refuses a knob's text that would not read right in every form: several lines, an open code span,
// ${{ (the runner refuses it), a final period, '<' or '*' outside code, or an unknown {name}.
func CheckText(s string, known func(name string) bool) error {
	var problems []string
	if strings.Contains(s, "\n") {
		problems = append(problems, "a line break")
	}
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		problems = append(problems, "a code span left open (an odd number of `)")
	}
	if strings.Contains(s, "${{") {
		problems = append(problems, "${{, which the runner refuses in a description: write the expression without it")
	}
	if strings.HasSuffix(s, ".") {
		problems = append(problems, "a final period: the forms add their own")
	}
	for i, p := range parts {
		if i%2 == 1 {
			continue
		}
		if strings.ContainsAny(p, "<*") {
			problems = append(problems, fmt.Sprintf("%q outside `code`: Markdown would read it as HTML or emphasis", p))
		}
		for _, m := range option.FindAllStringSubmatch(p, -1) {
			if !known(m[1]) {
				problems = append(problems, fmt.Sprintf("{%s}, which names no option", m[1]))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%q has %s", s, strings.Join(problems, "; "))
}
