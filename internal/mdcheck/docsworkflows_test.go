package mdcheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/hook"
)

// docWorkflow is a workflow snippet of README.md or docs/*.md, parsed.
type docWorkflow struct {
	where string // page:line
	w     *Workflow
}

func docsWorkflows(t *testing.T) []docWorkflow {
	t.Helper()
	pages, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	pages = append([]string{filepath.Join(repo, "README.md")}, pages...)
	var out []docWorkflow
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, p)
		for _, s := range Workflows(string(data)) {
			w, err := ParseWorkflow(s.YAML)
			where := rel + ":" + strconv.Itoa(s.Line)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			out = append(out, docWorkflow{where, w})
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d workflow snippets in README.md and docs/*.md: is the extractor finding them?", len(out))
	}
	return out
}

// queueStep is a step that runs the action (rocm/sgpu-queue@…, or the local one).
func queueStep(s Step) bool {
	return strings.HasPrefix(s.Uses, "rocm/sgpu-queue@") || s.Uses == "./"
}

// runsQueue reports whether the step runs suites (mode run, no report-from).
func runsQueue(s Step) bool {
	return queueStep(s) && (s.With["mode"] == "" || s.With["mode"] == "run") && s.With["report-from"] == ""
}

// Every artifact upload of a docs workflow overwrites: "Re-run failed jobs" uploads the
// same name again, which upload-artifact@v4 refuses without it (409), losing the re-run's
// results (issue 28, point 2).
func TestDocsUploadsOverwrite(t *testing.T) {
	n := 0
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			for _, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
					n++
					if s.With["overwrite"] != "true" {
						t.Errorf("%s: job %s: %s without overwrite: true (a re-run attempt fails with 409)", d.where, j.ID, s.Uses)
					}
				}
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d uploads found", n)
	}
}

// A job that runs the queue bounds its step below its own timeout with room to spare,
// as TE's do (270/240, 210/180 minutes): the report and upload steps still run when
// the queue overruns, and they run whatever it did (if: always()) (issue 28, point 5).
func TestDocsQueueStepTimeouts(t *testing.T) {
	const margin = 30
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			i := slices.IndexFunc(j.Steps, runsQueue)
			if i < 0 {
				continue
			}
			s := j.Steps[i]
			if j.TimeoutMinutes == 0 || s.TimeoutMinutes == 0 || j.TimeoutMinutes-s.TimeoutMinutes < margin {
				t.Errorf("%s: job %s (timeout-minutes %d), queue step at line %d (timeout-minutes %d): want both, the step's at least %d "+
					"minutes shorter", d.where, j.ID, j.TimeoutMinutes, s.Line, s.TimeoutMinutes, margin)
			}
			for _, after := range j.Steps[i+1:] {
				if strings.HasPrefix(after.Uses, "actions/upload-artifact@") && !strings.Contains(after.If, "always()") {
					t.Errorf("%s: job %s: the upload after the queue step runs only if the queue passed (want if: always())", d.where, j.ID)
				}
			}
		}
	}
}

// TE's configs are read as their own queue: its mGPU config in mgpu-config, or in
// config with queue: mgpu. In config of an sGPU queue its single-GPU tests run a second
// time and its multi-GPU ones never (issue 28, point 1).
func TestDocsTEConfigsReadAsTheirQueue(t *testing.T) {
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			for _, s := range j.Steps {
				if queueStep(s) && strings.Contains(s.With["config"], "ci_mgpu_queue.conf") && s.With["queue"] != "mgpu" {
					t.Errorf("%s: job %s: config %q reads TE's mGPU config as the sGPU queue: give it to mgpu-config (or queue: mgpu)",
						d.where, j.ID, s.With["config"])
				}
			}
		}
	}
}

// readByAction are the step variables the action reads itself: the rest reach the
// suites' commands in a container only through pass-env.
var readByAction = []string{engine.SuitesVar, hook.PortBaseVar, hook.Default().Level, hook.Default().JUnitPrefix, hook.Default().JUnitSuffix}

// With container:, the commands see the container's environment: a variable the step
// sets for the tests (a secret) must be in pass-env, as TE's docker exec -e HF_TOKEN
// passes it (issue 28, point 3).
func TestDocsContainerStepsPassTheirEnv(t *testing.T) {
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			for _, s := range j.Steps {
				if !queueStep(s) || s.With["container"] == "" {
					continue
				}
				patterns := strings.Fields(s.With["pass-env"])
				for name := range s.Env {
					if slices.Contains(readByAction, name) {
						continue
					}
					if !slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
						t.Errorf("%s: job %s: the step sets %s for the tests, but its pass-env (%q) does not pass it into the container",
							d.where, j.ID, name, patterns)
					}
				}
			}
		}
	}
}

// Every junit-optional pattern of a docs step names a suite of that step's configs
// (TE's, as testdata/te-current has them): torch/benchmark in the mGPU job names a
// label that queue does not have (issue 28, point 10).
func TestDocsJUnitOptionalNamesASuite(t *testing.T) {
	te := filepath.Join(repo, "testdata", "te-current")
	checked := 0
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			for _, s := range j.Steps {
				if !queueStep(s) || s.With["junit-optional"] == "" {
					continue
				}
				var files []string
				for _, c := range strings.FieldsFunc(s.With["config"]+" "+s.With["mgpu-config"], func(r rune) bool { return r == ' ' || r == ',' || r == '\n' }) {
					files = append(files, filepath.Join(te, c))
				}
				suites, err := config.Load(files)
				if err != nil {
					continue // not TE's configs
				}
				var labels []string
				for _, su := range suites {
					labels = append(labels, su.Label)
				}
				for _, p := range strings.Fields(s.With["junit-optional"]) {
					checked++
					label, _, _ := strings.Cut(p, "/")
					if !slices.ContainsFunc(labels, func(l string) bool { ok, _ := path.Match(label, l); return ok }) {
						t.Errorf("%s: job %s: junit-optional %s names no suite of %q (labels %s)", d.where, j.ID, p, files, labels)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no junit-optional pattern of a docs step was checked")
	}
}

// Every TE_CI_* name README.md and docs/*.md give is one TE's scripts or sgpu-queue
// use: the fixture tree in TE's shape (testdata/te-current) or the code. The docs told
// TE users to rename the listing switches to TE_CI_LIST_ONLY and TE_CI_LIST_ALL, names
// TE does not use (issue 28, point 10).
func TestDocsNameTEVariablesThatExist(t *testing.T) {
	known := map[string]bool{}
	teName := regexp.MustCompile(`TE_CI_[A-Z0-9_]+`)
	for _, dir := range []string{filepath.Join(repo, "testdata", "te-current"), filepath.Join(repo, "internal")} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") || !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".sh") &&
				!strings.HasSuffix(p, ".py") {
				return err
			}
			data, err := os.ReadFile(p)
			for _, n := range teName.FindAllString(string(data), -1) {
				known[n] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	for _, p := range append(pages, filepath.Join(repo, "README.md")) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(data), "\n") {
			for _, n := range teName.FindAllString(l, -1) {
				if !known[n] {
					t.Errorf("%s:%d names %s, which neither TE's scripts (testdata/te-current) nor sgpu-queue use", filepath.Base(p), i+1, n)
				}
			}
		}
	}
}

// A job that starts a named container removes it at its end, whatever happened: on a
// self-hosted runner the next run's `docker run --name` fails on the one left
// running (TE's workflow ends with docker rm -f te-runner, if: always()).
func TestDocsJobsRemoveTheirContainer(t *testing.T) {
	name := regexp.MustCompile(`docker run\b[^\n]*?--name[ =](\S+)`)
	n := 0
	for _, d := range docsWorkflows(t) {
		for _, j := range d.w.Jobs {
			for i, s := range j.Steps {
				m := name.FindStringSubmatch(strings.ReplaceAll(s.Run, "\\\n", " "))
				if m == nil {
					continue
				}
				n++
				if !slices.ContainsFunc(j.Steps[i+1:], func(after Step) bool {
					return strings.Contains(after.If, "always()") && strings.Contains(after.Run, "docker rm -f "+m[1])
				}) {
					t.Errorf("%s: job %s starts container %s but has no later step `docker rm -f %s` with if: always()", d.where, j.ID, m[1], m[1])
				}
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d docker run --name found", n)
	}
}
