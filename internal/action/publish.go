package action

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/publish"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// publishTargets reads the publish input; empty means summary.
func publishTargets(in string) (map[string]bool, error) {
	t := map[string]bool{}
	words := fields(in)
	if len(words) == 0 {
		return map[string]bool{"summary": true}, nil
	}
	none := false
	for _, w := range words {
		switch w = strings.ToLower(w); w {
		case "summary", "check", "comment":
			t[w] = true
		case "none":
			none = true
		default:
			return nil, fmt.Errorf("input publish %q: want any of summary, check, comment, or none", w)
		}
	}
	if none && len(t) > 0 {
		return nil, fmt.Errorf("input publish %q: none cannot go with summary, check or comment", in)
	}
	return t, nil
}

// pubInputs are the inputs that say where a check run or comment goes when the
// event cannot: a workflow_run job publishing for a fork's pull request.
type pubInputs struct {
	commit string // the commit the check run goes on ("" = from the event)
	pr     int    // the pull request the comment goes on (0 = from the event)
}

func (a *act) publishInputs() (pubInputs, error) {
	var p pubInputs
	var errs []error
	if c := strings.TrimSpace(a.gh.GetInput("commit")); c != "" {
		if publish.IsCommitID(c) {
			p.commit = c
		} else {
			errs = append(errs, fmt.Errorf("input commit %q: want a full commit id (40 hex digits), "+
				"e.g. ${{ github.event.workflow_run.head_sha }}", c))
		}
	}
	if n := strings.TrimSpace(a.gh.GetInput("pr-number")); n != "" {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			p.pr = v
		} else {
			errs = append(errs, fmt.Errorf("input pr-number %q: want a pull request number, "+
				"e.g. ${{ github.event.workflow_run.pull_requests[0].number }}", n))
		}
	}
	return p, errors.Join(errs...)
}

// checkName is the name of this job's check run and sticky comment. A step cannot
// read its job's display name, so the matrix input gives each leg its own.
func (a *act) checkName() (string, error) {
	if n := strings.TrimSpace(a.gh.GetInput("check-name")); n != "" {
		return n, nil
	}
	values, err := matrixValues(a.gh.GetInput("matrix"))
	if err != nil {
		return "", err
	}
	parts := values
	if job := a.e.Getenv("GITHUB_JOB"); job != "" {
		parts = append([]string{job}, values...)
	}
	if len(parts) == 0 {
		return "sgpu-queue", nil
	}
	return "sgpu-queue (" + strings.Join(parts, ", ") + ")", nil
}

// matrixValues are the values of toJSON(matrix), in the workflow's order.
func matrixValues(in string) ([]string, error) {
	in = strings.TrimSpace(in)
	if in == "" || in == "null" {
		return nil, nil
	}
	bad := func(err error) error {
		return fmt.Errorf("input matrix: %w; leave it at its default ${{ toJSON(matrix) }}", err)
	}
	dec := json.NewDecoder(strings.NewReader(in))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad(fmt.Errorf("not a JSON object"))
	}
	var values []string
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return nil, bad(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad(err)
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		values = append(values, textfmt.OneLine(s))
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad(fmt.Errorf("text after the object"))
	}
	return values, nil
}

// CacheLeg is the per-leg part of the cache key: the check name made safe, plus a
// hash so legs differing only in unsafe characters stay apart.
func CacheLeg(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(name))
	return strings.Trim(b.String(), "_") + "-" + hex.EncodeToString(sum[:4])
}

// reportWhere says where the report can be read when the check run or comment
// could not be made.
func (a *act) reportWhere(res *engine.Result) string {
	if a.summed {
		return "the report is in the job summary"
	}
	return fmt.Sprintf("the report is %s (upload the log dir as an artifact to keep it)", a.rel(res.Report))
}

// publishPR creates the check run and/or the sticky comment; failing is a warning,
// never a failed step.
func (a *act) publishPR(ctx context.Context, res *engine.Result) {
	if !a.targets["check"] && !a.targets["comment"] {
		return
	}
	token := a.gh.GetInput("github-token")
	if token == "" {
		a.obs.Warn("publish: no github-token, so no check run or PR comment; " + a.reportWhere(res))
		return
	}
	req := a.request(res, token)
	req.Tests = a.checkTests(res)
	for _, it := range verdict.Select(res.Suites, untestedFailure(res.Stats.Tests)) {
		f := publish.Failure{Suite: it.Label, Item: tagName(it.Tag), RC: it.RC, Note: it.Note, Log: a.itemLog(res.LogDir, it)}
		f.Path, f.Line = a.configLine(res, it.Label)
		req.Failures = append(req.Failures, f)
	}
	// Publishing still happens after a cancel, within its own bound.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	unreachable := false
	for _, target := range []string{"check", "comment"} {
		if !a.targets[target] {
			continue
		}
		if unreachable {
			// Another call would only wait for the same silence (docs/report.md).
			fmt.Fprintf(a.e.Stdout, "  publish: no PR comment: the GitHub API could not be reached for the check run\n")
			continue
		}
		var out publish.Outcome
		var err error
		if target == "check" {
			out, err = publish.Check(pctx, req)
		} else {
			out, err = publish.Comment(pctx, req)
		}
		for _, n := range out.Notes {
			fmt.Fprintf(a.e.Stdout, "  publish: %s\n", n)
		}
		for _, w := range out.Warnings {
			a.obs.Warn("publish: " + w + "; " + a.reportWhere(res))
		}
		if err != nil {
			a.obs.Warn(fmt.Sprintf("publish %s: %v; %s", target, err, a.reportWhere(res)))
			var ue *publish.UnreachableError
			unreachable = errors.As(err, &ue)
		}
		if out.Check != "" {
			fmt.Fprintf(a.e.Stdout, "  check run: %s\n", out.Check)
		}
		if out.Comment != "" {
			fmt.Fprintf(a.e.Stdout, "  PR comment: %s\n", out.Comment)
		}
	}
}

// request is what to publish; a pull_request's commit is its head, not the merge
// commit GITHUB_SHA names.
func (a *act) request(res *engine.Result, token string) publish.Request {
	env := a.e.Getenv
	pr, head, err := publish.PRFromEvent(env("GITHUB_EVENT_PATH"))
	if err != nil {
		a.obs.Warn(fmt.Sprintf("publish: %v", err))
	}
	sha := env("GITHUB_SHA")
	if pr > 0 && head != "" {
		sha = head
	}
	if a.pub.commit != "" {
		sha = a.pub.commit
	}
	if a.pub.pr > 0 {
		pr = a.pub.pr
	}
	st := res.Stats
	conclusion := "success"
	switch {
	case res.Cancelled:
		conclusion = "cancelled"
	case res.ExitCode != 0:
		conclusion = "failure"
	}
	title := fmt.Sprintf("sgpu-queue: %d of %d items failed, %.1f %% GPU utilisation", st.Failed, st.Items, 100*st.Utilisation)
	if c := st.Tests.Counts; st.Tests.Known {
		title = fmt.Sprintf("sgpu-queue: %d of %d tests failed, %d of %d items", c.Bad(), c.Total, st.Failed, st.Items)
	}
	return publish.Request{
		Token: token, APIURL: env("GITHUB_API_URL"), Repo: env("GITHUB_REPOSITORY"), SHA: sha, PR: pr,
		Workflow: env("GITHUB_WORKFLOW"), Job: env("GITHUB_JOB"), Name: a.leg,
		Title:   title,
		Summary: a.scrub(res.Markdown),
		Comment: a.scrub(res.Comment),
		// A green run only edits an earlier comment (docs/report.md#the-pr-comment).
		CommentEditOnly: res.ExitCode == 0 && st.Tests.Counts.Bad() == 0 && !st.Change.Any(),
		Conclusion:      conclusion,
		DetailsURL:      a.runPage,
		WorkflowPath:    publish.WorkflowPathFromRef(env("GITHUB_WORKFLOW_REF")),
	}
}

func tagName(tag string) string {
	if tag == "" {
		return "(whole suite)"
	}
	return tag
}
