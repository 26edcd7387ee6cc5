package mdcheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Snippet is a workflow a Markdown page shows, as .ci/actionlint lints them: a jobs:
// map alone gets an "on: push" line.
type Snippet struct {
	Line int    // of the opening fence, from 1
	YAML string // the workflow
}

var (
	yamlFence = regexp.MustCompile("^```yaml[ \t]*$")
	endFence  = regexp.MustCompile("^```[ \t]*$")
	onLine    = regexp.MustCompile(`(?m)^on:`)
	jobsLine  = regexp.MustCompile(`(?m)^jobs:`)
)

// Workflows returns the workflow snippets of md, in page order.
func Workflows(md string) []Snippet {
	var out []Snippet
	var body strings.Builder
	start := 0
	for i, l := range strings.Split(md, "\n") {
		switch {
		case start == 0 && yamlFence.MatchString(l):
			start = i + 1
			body.Reset()
		case start != 0 && endFence.MatchString(l):
			switch b := body.String(); {
			case onLine.MatchString(b):
				out = append(out, Snippet{Line: start, YAML: b})
			case jobsLine.MatchString(b):
				out = append(out, Snippet{Line: start, YAML: "on: push\n" + b})
			}
			start = 0
		case start != 0:
			body.WriteString(l + "\n")
		}
	}
	return out
}

// Workflow is what the checks of the docs read of a workflow: its jobs, in order.
type Workflow struct {
	Env  map[string]string
	Jobs []Job
}

// Job is one job of a workflow.
type Job struct {
	ID             string
	Needs          []string
	If             string
	RunsOn         string
	TimeoutMinutes int               // 0: not given
	Env            map[string]string // the job's env:
	Matrix         map[string][]string
	Steps          []Step
}

// Step is one step of a job; With and Env hold each scalar as written.
type Step struct {
	ID, Name, Uses, Run, If string
	With, Env               map[string]string
	TimeoutMinutes          int
	ContinueOnError         bool
	Line                    int // in the snippet, from 1
}

// Job returns the job of that id.
func (w *Workflow) Job(id string) (Job, bool) {
	for _, j := range w.Jobs {
		if j.ID == id {
			return j, true
		}
	}
	return Job{}, false
}

// ParseWorkflow reads a workflow's jobs and steps, refusing what the docs' checks
// could not read.
func ParseWorkflow(src string) (*Workflow, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a workflow: no map at the top")
	}
	root := doc.Content[0]
	w := &Workflow{}
	var err error
	if w.Env, err = scalars(get(root, "env")); err != nil {
		return nil, err
	}
	jobs := get(root, "jobs")
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no jobs: map")
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		j, err := parseJob(jobs.Content[i].Value, jobs.Content[i+1])
		if err != nil {
			return nil, err
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, nil
}

func parseJob(id string, n *yaml.Node) (Job, error) {
	j := Job{ID: id}
	if n.Kind != yaml.MappingNode {
		return j, fmt.Errorf("line %d: job %s is not a map", n.Line, id)
	}
	j.If, j.RunsOn = value(get(n, "if")), value(get(n, "runs-on"))
	j.Needs = list(get(n, "needs"))
	j.TimeoutMinutes, _ = strconv.Atoi(value(get(n, "timeout-minutes")))
	var err error
	if j.Env, err = scalars(get(n, "env")); err != nil {
		return j, err
	}
	if m := get(get(n, "strategy"), "matrix"); m != nil && m.Kind == yaml.MappingNode {
		j.Matrix = map[string][]string{}
		for i := 0; i+1 < len(m.Content); i += 2 {
			j.Matrix[m.Content[i].Value] = list(m.Content[i+1])
		}
	}
	steps := get(n, "steps")
	if steps == nil {
		return j, nil
	}
	for _, s := range steps.Content {
		st, err := parseStep(s)
		if err != nil {
			return j, fmt.Errorf("job %s: %w", id, err)
		}
		j.Steps = append(j.Steps, st)
	}
	return j, nil
}

func parseStep(n *yaml.Node) (Step, error) {
	if n.Kind != yaml.MappingNode {
		return Step{}, fmt.Errorf("line %d: a step that is not a map", n.Line)
	}
	s := Step{ID: value(get(n, "id")), Name: value(get(n, "name")), Uses: value(get(n, "uses")), Run: value(get(n, "run")),
		If: value(get(n, "if")), Line: n.Line, ContinueOnError: value(get(n, "continue-on-error")) == "true"}
	s.TimeoutMinutes, _ = strconv.Atoi(value(get(n, "timeout-minutes")))
	var err error
	if s.With, err = scalars(get(n, "with")); err != nil {
		return s, err
	}
	s.Env, err = scalars(get(n, "env"))
	return s, err
}

// get is the value of key in the map n, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// value is a scalar's text ("" for anything else).
func value(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// list is a sequence's scalars, or a lone scalar as a list of one.
func list(n *yaml.Node) []string {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.ScalarNode:
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, value(c))
	}
	return out
}

// scalars reads a map of scalars (with:, env:).
func scalars(n *yaml.Node) (map[string]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a map", n.Line)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %s is not a scalar", v.Line, k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}
