package action

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/publish"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// publishTargets reads the publish input: any of summary, check, comment.
func publishTargets(in string) (map[string]bool, error) {
	t := map[string]bool{}
	for _, w := range fields(in) {
		switch w = strings.ToLower(w); w {
		case "summary", "check", "comment":
			t[w] = true
		case "none":
		default:
			return nil, fmt.Errorf("input publish %q: want any of summary, check, comment (or none)", w)
		}
	}
	return t, nil
}

// publishPR creates the check run and/or the sticky comment. Failing to publish is a
// warning, never a failed step: the report is in the summary and the log dir anyway.
func (a *act) publishPR(ctx context.Context, res *engine.Result, targets map[string]bool) {
	if !targets["check"] && !targets["comment"] {
		return
	}
	env := a.e.Getenv
	token := a.gh.GetInput("github-token")
	if token == "" {
		a.obs.Warn("publish: no github-token, so no check run or PR comment; the report is in the job summary")
		return
	}
	pr, head, err := publish.PRFromEvent(env("GITHUB_EVENT_PATH"))
	if err != nil {
		a.obs.Warn(fmt.Sprintf("publish: %v", err))
	}
	sha := env("GITHUB_SHA")
	if pr > 0 && head != "" {
		sha = head // the PR's head, not the merge commit GITHUB_SHA names
	}
	st := res.Stats
	conclusion := "success"
	switch {
	case res.Cancelled:
		conclusion = "cancelled"
	case res.ExitCode != 0:
		conclusion = "failure"
	}
	req := publish.Request{
		Token: token, APIURL: env("GITHUB_API_URL"), Repo: env("GITHUB_REPOSITORY"), SHA: sha, PR: pr,
		Workflow: env("GITHUB_WORKFLOW"), Job: env("GITHUB_JOB"),
		Title:        fmt.Sprintf("sgpu-queue: %d of %d items failed, %.1f %% GPU utilisation", st.Failed, st.Items, 100*st.Utilisation),
		Summary:      res.Markdown,
		Conclusion:   conclusion,
		DetailsURL:   fmt.Sprintf("%s/%s/actions/runs/%s", env("GITHUB_SERVER_URL"), env("GITHUB_REPOSITORY"), env("GITHUB_RUN_ID")),
		WorkflowPath: publish.WorkflowPathFromRef(env("GITHUB_WORKFLOW_REF")),
	}
	for _, it := range verdict.FailedItems(res.Suites) {
		f := publish.Failure{Suite: it.Label, Item: tagName(it.Tag), Log: a.rel(filepath.Join(res.LogDir, it.LogRel)), RC: it.RC, Note: it.Note}
		if c, ok := res.Configs[it.Label]; ok {
			f.Path, f.Line = a.rel(a.path(c.File)), c.Line
		}
		req.Failures = append(req.Failures, f)
	}
	// Publishing still happens after a cancel, within its own bound.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	for _, target := range []string{"check", "comment"} {
		if !targets[target] {
			continue
		}
		var out publish.Outcome
		if target == "check" {
			out, err = publish.Check(pctx, req)
		} else {
			out, err = publish.Comment(pctx, req)
		}
		for _, n := range out.Notes {
			fmt.Fprintf(a.e.Stdout, "  publish: %s\n", n)
		}
		for _, w := range out.Warnings {
			a.obs.Warn(w)
		}
		if err != nil {
			a.obs.Warn(fmt.Sprintf("publish %s: %v", target, err))
		}
		if out.Check != "" {
			fmt.Fprintf(a.e.Stdout, "  check run: %s\n", out.Check)
		}
		if out.Comment != "" {
			fmt.Fprintf(a.e.Stdout, "  PR comment: %s\n", out.Comment)
		}
	}
}

func tagName(tag string) string {
	if tag == "" {
		return "(whole suite)"
	}
	return tag
}
