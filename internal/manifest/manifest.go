// Package manifest checks an action.yml as the Actions runner loads it, so a
// manifest the runner would refuse at "Set up job" fails a test instead
// (docs/releases.md). The rules are the runner's action_yaml.json schema.
package manifest

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one thing the runner (or the Marketplace) would refuse, at its place
// in the file.
type Problem struct {
	File         string
	Line, Column int
	Path         string // the key path, e.g. inputs.container.description
	Msg          string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", p.File, p.Line, p.Column, p.Path, p.Msg)
}

// Where expressions may stand and the contexts they may name (action_yaml.json:
// input-default-context, container-runs-context, container-runs-env, output-value).
var (
	defaultContexts = []string{"github", "strategy", "matrix", "job", "runner", "hashFiles"}
	runsContexts    = []string{"inputs"}
	outputContexts  = []string{"github", "strategy", "matrix", "steps", "inputs", "job", "runner", "env"}
)

var runsKeys = []string{"using", "image", "entrypoint", "args", "env",
	"pre-entrypoint", "pre-if", "post-entrypoint", "post-if"}

type checker struct {
	file     string
	problems []error
}

func (c *checker) add(n *yaml.Node, path, format string, a ...any) {
	c.problems = append(c.problems, &Problem{File: c.file, Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, a...)})
}

// Check returns every problem of the manifest data read from file (nil when the
// runner would load it); each is a *Problem, or a YAML error naming the file.
func Check(file string, data []byte) []error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []error{fmt.Errorf("%s: not YAML the runner can read: %w", file, err)}
	}
	c := &checker{file: file}
	if len(doc.Content) == 0 {
		return []error{fmt.Errorf("%s: empty: an action manifest needs name, description and runs", file)}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		c.add(root, "(root)", "not a mapping: an action manifest is name:, description:, inputs:, outputs:, runs:")
		return c.problems
	}
	seen := map[string]bool{}
	eachPair(root, func(k, v *yaml.Node) {
		seen[k.Value] = true
		switch k.Value {
		case "name", "description", "author":
			c.str(v, k.Value, nil, true)
		case "inputs":
			c.inputs(v)
		case "outputs":
			c.outputs(v)
		case "runs":
			c.runs(v)
		default:
			c.noExpr(v, k.Value)
		}
	})
	for _, k := range []string{"name", "description", "runs"} {
		if !seen[k] {
			c.add(root, k, "missing: the runner (runs) and the Marketplace (name, description) need it")
		}
	}
	return c.problems
}

func (c *checker) inputs(n *yaml.Node) {
	if !c.mapping(n, "inputs") {
		return
	}
	eachPair(n, func(k, v *yaml.Node) {
		path := "inputs." + k.Value
		if !c.mapping(v, path) {
			return
		}
		eachPair(v, func(pk, pv *yaml.Node) {
			if pk.Value == "default" {
				c.str(pv, path+".default", defaultContexts, false)
				return
			}
			c.noExpr(pv, path+"."+pk.Value)
		})
	})
}

func (c *checker) outputs(n *yaml.Node) {
	if !c.mapping(n, "outputs") {
		return
	}
	eachPair(n, func(k, v *yaml.Node) {
		path := "outputs." + k.Value
		if !c.mapping(v, path) {
			return
		}
		eachPair(v, func(pk, pv *yaml.Node) {
			switch pk.Value {
			case "description":
				c.str(pv, path+".description", nil, false)
			case "value":
				c.str(pv, path+".value", outputContexts, false)
			default:
				c.add(pk, path+"."+pk.Value, "unexpected key: an output has only description (and value)")
			}
		})
	})
}

func (c *checker) runs(n *yaml.Node) {
	if !c.mapping(n, "runs") {
		return
	}
	seen := map[string]*yaml.Node{}
	eachPair(n, func(k, v *yaml.Node) {
		path := "runs." + k.Value
		seen[k.Value] = v
		switch {
		case k.Value == "args":
			if v.Kind != yaml.SequenceNode {
				c.add(v, path, "not a sequence: args is a list of strings")
				return
			}
			for i, a := range v.Content {
				c.str(a, fmt.Sprintf("%s[%d]", path, i), runsContexts, true)
			}
		case k.Value == "env":
			if c.mapping(v, path) {
				eachPair(v, func(ek, ev *yaml.Node) { c.str(ev, path+"."+ek.Value, runsContexts, false) })
			}
		case slices.Contains(runsKeys, k.Value):
			c.str(v, path, nil, true)
		default:
			c.add(k, path, "unexpected key: a container action's runs has %s", strings.Join(runsKeys, ", "))
		}
	})
	switch u := seen["using"]; {
	case u == nil:
		c.add(n, "runs.using", "missing: this project's actions are container actions (using: docker)")
	case u.Value != "docker":
		c.add(u, "runs.using", "is %q: this project's actions are container actions (using: docker)", u.Value)
	}
	if seen["image"] == nil {
		c.add(n, "runs.image", "missing: a container action names its image (docker://<image>:<tag> or a Dockerfile)")
	}
}

// mapping reports whether n is a mapping, adding a problem when it is not.
func (c *checker) mapping(n *yaml.Node, path string) bool {
	if n.Kind == yaml.MappingNode {
		return true
	}
	c.add(n, path, "not a mapping")
	return false
}

// str checks a string value whose expressions name only the contexts given.
func (c *checker) str(n *yaml.Node, path string, contexts []string, nonEmpty bool) {
	if n.Kind != yaml.ScalarNode {
		c.add(n, path, "not a string")
		return
	}
	if nonEmpty && n.Value == "" {
		c.add(n, path, "empty: the runner requires a non-empty string")
	}
	if contexts == nil {
		c.noExpr(n, path)
		return
	}
	for _, name := range namedValues(n.Value) {
		if !slices.Contains(contexts, name) {
			c.add(n, path, "Unrecognized named-value: '%s': the runner knows only %s here", name, strings.Join(contexts, ", "))
		}
	}
	if err := unclosed(n.Value); err != nil {
		c.add(n, path, "%v", err)
	}
}

// noExpr adds a problem for every scalar under n holding "${{": the runner fails
// the whole job at "Set up job" on an expression where its schema allows none.
func (c *checker) noExpr(n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		if strings.Contains(n.Value, "${{") {
			c.add(n, path, "expressions are not allowed here: the runner evaluates ${{ }} only in an input's default, "+
				"runs.args and runs.env, and refuses to load the action (the job fails at \"Set up job\"); write the text without ${{")
		}
		return
	}
	for i, ch := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			p = path + "." + n.Content[i-1].Value
		}
		c.noExpr(ch, p)
	}
}

// eachPair calls f with each key and value of the mapping n.
func eachPair(n *yaml.Node, f func(k, v *yaml.Node)) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		f(n.Content[i], n.Content[i+1])
	}
}

var (
	exprRE  = regexp.MustCompile(`\$\{\{(.*?)\}\}`)
	quoted  = regexp.MustCompile(`'(?:[^']|'')*'`)
	ident   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_-]*`)
	literal = []string{"true", "false", "null", "NaN", "Infinity"}
)

// namedValues returns the contexts (and hashFiles, the one function the runner
// restricts) that the expressions in s name.
func namedValues(s string) []string {
	var names []string
	for _, m := range exprRE.FindAllStringSubmatch(s, -1) {
		e := quoted.ReplaceAllString(m[1], "''")
		for _, loc := range ident.FindAllStringIndex(e, -1) {
			name, rest := e[loc[0]:loc[1]], strings.TrimLeft(e[loc[1]:], " ")
			if loc[0] > 0 && strings.ContainsAny(e[loc[0]-1:loc[0]], ".0123456789") || slices.Contains(literal, name) {
				continue
			}
			if strings.HasPrefix(rest, "(") && name != "hashFiles" {
				continue
			}
			names = append(names, name)
		}
	}
	return names
}

// unclosed reports a "${{" without its "}}".
func unclosed(s string) error {
	if strings.Count(s, "${{") > len(exprRE.FindAllString(s, -1)) {
		return errors.New("an expression is not closed: ${{ without }}")
	}
	return nil
}
