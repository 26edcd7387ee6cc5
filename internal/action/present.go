package action

// What the step shows of a run: annotations, the job summary, outputs, console.

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/mdcut"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// present turns a finished run into annotations, the summary and the outputs.
func (a *act) present(res *engine.Result) {
	for _, e := range a.errorAnnotations(res) {
		a.gh.WithFieldsMap(e.fields).Errorf("%s", e.msg)
	}
	if res.Markdown != "" && a.targets["summary"] {
		a.summed = a.summary(res.Markdown)
	}
	a.outputs(a.outputValues(res))
}

// suiteMessage is the annotation of a failed suite: its failed items no test
// annotation covers; false when there is nothing more to say.
func suiteMessage(s verdict.Suite, logDir string, a *act, untested func(verdict.Item) bool) (string, bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d items failed (rc=%d)", s.Failed, len(s.Items), s.RC)
	if s.Broken != "" { // its listing or setup failed (on a shard of a merge)
		fmt.Fprintf(&b, "\n%s", s.Broken)
	}
	left := verdict.Select([]verdict.Suite{s}, untested)
	if k := len(left); k < s.Failed {
		fmt.Fprintf(&b, "; %d of them by their failed tests, annotated one by one", s.Failed-k)
	}
	n := 0
	for _, it := range left {
		if n == 20 {
			fmt.Fprintf(&b, "\n… and %d more", len(left)-n)
			break
		}
		fmt.Fprintf(&b, "\n%s rc=%s %s", tagName(it.Tag), it.ShownRC(), cmp.Or(a.itemLog(logDir, it), engine.NoLog))
		if it.Note != "" {
			fmt.Fprintf(&b, " (%s)", it.Note)
		}
		n++
	}
	return b.String(), n > 0 || s.Broken != "" || s.Failed == 0
}

func (a *act) outputValues(res *engine.Result) map[string]string {
	type suiteOut struct {
		RC      int     `json:"rc"`
		Items   int     `json:"items"`
		Failed  int     `json:"failed"`
		Flaky   int     `json:"flaky"`
		Seconds float64 `json:"seconds"`
	}
	suites := map[string]suiteOut{}
	out := map[string]string{}
	failedSuites := []string{}
	for _, s := range res.Suites {
		suites[s.Label] = suiteOut{RC: s.RC, Items: len(s.Items), Failed: s.Failed, Flaky: s.Flaky, Seconds: round1(s.Seconds)}
		if !s.Passed() {
			failedSuites = append(failedSuites, s.Label)
		}
	}
	failedItems := []string{}
	for _, it := range verdict.FailedItems(res.Suites) {
		failedItems = append(failedItems, it.Key())
	}
	flaky := []string{}
	for _, it := range verdict.FlakyItems(res.Suites) {
		flaky = append(flaky, it.Key())
	}
	quarantined := []string{}
	for _, q := range res.Quarantined {
		quarantined = append(quarantined, q.GPU)
	}
	result := "success"
	if res.ExitCode != 0 {
		result = "failure"
	}
	junitFiles := make([]string, len(res.JUnit))
	for i, p := range res.JUnit {
		junitFiles[i] = a.rel(p)
	}
	out["result"] = result
	out["exit-code"] = strconv.Itoa(res.ExitCode)
	out["suites"] = mustJSON(suites)
	out["failed-suites"] = mustJSON(failedSuites)
	out["failed-items"] = mustJSON(failedItems)
	out["flaky-items"] = mustJSON(flaky)
	out["quarantined-gpus"] = mustJSON(quarantined)
	out["wall-seconds"] = strconv.FormatFloat(round1(res.Stats.Wall), 'f', -1, 64)
	out["utilisation"] = strconv.FormatFloat(round1(100*res.Stats.Utilisation), 'f', -1, 64)
	out["lower-bound-seconds"] = strconv.FormatFloat(round1(res.Stats.Bound), 'f', -1, 64)
	out["report"] = a.rel(res.Report)
	out["junit-files"] = strings.Join(junitFiles, "\n")
	out["weights-file"] = a.rel(res.WeightsFile)
	out["rerun"] = "0" // a full run
	if res.Rerun != nil {
		out["rerun"] = strconv.Itoa(res.Rerun.Ran)
	}
	out["matrix"] = "" // mode plan's
	out["plan"] = ""
	if p := strings.TrimSpace(a.gh.GetInput("plan")); p != "" && strings.TrimSpace(a.gh.GetInput("shard")) != "" {
		out["plan"] = a.rel(a.path(p)) // the plan a shard ran
	}
	a.cacheOutputs(out)
	testOutputs(res, out)
	return out
}

// cacheOutputs sets the outputs cache-hit and cache-matched-key in out.
func (a *act) cacheOutputs(out map[string]string) {
	out["cache-hit"], out["cache-matched-key"] = "false", ""
	if a.cache != nil {
		out["cache-hit"] = strconv.FormatBool(a.cache.Hit())
		out["cache-matched-key"] = a.cache.MatchedKey()
	}
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(data)
}

func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

// outputs writes step outputs with a random delimiter: go-githubactions' SetOutput
// uses a fixed one that a value could contain.
func (a *act) outputs(values map[string]string) {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		v := values[k]
		delim := delimiter(v)
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", k, delim, v, delim)
	}
	if err := a.fileCommand("output", strings.TrimSuffix(b.String(), "\n")); err != nil {
		a.gh.Warningf("step outputs not written: %v", err)
	}
}

// delimiter is a random line that no line of v equals.
func delimiter(v string) string {
	for {
		var buf [12]byte
		_, _ = rand.Read(buf[:])
		d := "sgpu_" + hex.EncodeToString(buf[:])
		if !strings.Contains(v, d) {
			return d
		}
	}
}

// summaryLimit is GitHub's cap on one step's summary.
const summaryLimit = 1 << 20

func (a *act) summary(md string) bool {
	md = a.scrub(md)
	// A cut closes the fence or <details> it falls in (mdcut), so the note renders.
	md = mdcut.Cut(md, summaryLimit-1024, "\n\n> The summary was cut at GitHub's 1 MiB limit; the whole report is in the log dir.\n")
	if a.e.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return false
	}
	if err := a.fileCommand("step-summary", md); err != nil {
		a.gh.Warningf("job summary not written: %v", err)
		return false
	}
	return true
}

// fileCommand appends to a runner command file, turning go-githubactions' panic
// into an error: a full disk must not crash the step after the tests ran.
func (a *act) fileCommand(name, msg string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	env := "GITHUB_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if a.e.Getenv(env) == "" {
		return fmt.Errorf("%s is not set (not running under GitHub Actions?)", env)
	}
	a.gh.IssueFileCommand(&githubactions.Command{Name: name, Message: msg})
	return nil
}

// observer folds each phase in a ::group:: and turns warnings into annotations
// within GitHub's per-step cap.
type observer struct {
	gh       *githubactions.Action
	out      io.Writer
	open     bool
	warnings int
	extra    []string
}

func (o *observer) Phase(n int, title string) {
	o.close()
	o.gh.Group(fmt.Sprintf("Phase %d: %s", n, title))
	o.open = true
}

func (o *observer) Warn(msg string) {
	o.warnings++
	if o.warnings < maxAnnotations {
		o.gh.Warningf("%s", msg)
		return
	}
	o.extra = append(o.extra, msg)
	fmt.Fprintf(o.out, "warning: %s\n", msg)
}

func (o *observer) close() {
	if o.open {
		o.gh.EndGroup()
		o.open = false
	}
}

func (o *observer) flushWarnings() {
	if len(o.extra) > 0 {
		o.gh.Warningf("%d more warnings in the log (GitHub shows %d annotations per step)", len(o.extra), maxAnnotations)
		o.extra = nil
	}
}
