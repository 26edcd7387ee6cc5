package publish

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/rocm/sgpu-queue/internal/mdcut"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// conclusions the check-run API accepts for a completed run.
var conclusions = map[string]bool{
	"success": true, "failure": true, "cancelled": true, "neutral": true,
	"skipped": true, "timed_out": true, "action_required": true,
}

var hexSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// IsCommitID reports whether s is a full lower-case SHA-1 or SHA-256, the only head_sha the checks API accepts.
func IsCommitID(s string) bool { return hexSHA.MatchString(s) }

// Check creates a completed check run on r.SHA with the report as summary and the failures as annotations, 50 a
// request as the API takes them, at most MaxAnnotations. A read-only token is a warning, not an error.
func Check(ctx context.Context, r Request) (o Outcome, err error) {
	s, err := newSession(r)
	if err != nil {
		return o, err
	}
	if !hexSHA.MatchString(r.SHA) {
		return o, fmt.Errorf("head sha %q is not a commit id: pass the PR head sha (PRFromEvent) or GITHUB_SHA", r.SHA)
	}
	if !conclusions[r.Conclusion] {
		return o, fmt.Errorf("conclusion %q is not one of success, failure, cancelled, neutral, skipped, timed_out, action_required",
			r.Conclusion)
	}

	name := checkName(r)
	title, summary := checkText(r)

	anns := Annotations(r)
	if n := len(anns); n > MaxAnnotations {
		o.Warnings = append(o.Warnings, s.scrub(fmt.Sprintf("%d failed tests or items were not annotated on the check run (at most %d are "+
			"sent); the report lists them all", n-MaxAnnotations, MaxAnnotations)))
		anns = anns[:MaxAnnotations]
	}
	first, rest := split(anns)

	now := github.Timestamp{Time: time.Now().UTC()}
	opts := github.CreateCheckRunOptions{
		Name:        name,
		HeadSHA:     r.SHA,
		Status:      github.String("completed"),
		Conclusion:  github.String(r.Conclusion),
		CompletedAt: &now,
		ExternalID:  github.String(markerKey(r.Workflow, name)),
		Output: &github.CheckRunOutput{
			Title:       github.String(title),
			Summary:     github.String(summary),
			Annotations: first,
		},
	}
	if r.DetailsURL != "" {
		opts.DetailsURL = github.String(r.DetailsURL)
	}
	defer func() { o.Notes = append(o.Notes, s.retryNotes()...) }()
	run, _, err := s.gh.Checks.CreateCheckRun(ctx, s.owner, s.repo, opts)
	if err != nil {
		err = s.classify(&o, err, "check run", "checks: write", "")
		return o, err
	}
	o.Check = run.GetHTMLURL()
	err = s.annotate(ctx, &o, run.GetID(), name, title, summary, rest)
	return o, err
}

// checkText is the check run's title and summary, cut to MaxTextBytes.
func checkText(r Request) (title, summary string) {
	title = r.Title
	if title == "" {
		title = "sgpu-queue: " + r.Conclusion
	}
	summary = r.Summary
	if strings.TrimSpace(summary) == "" {
		summary = "(no report)"
	}
	// A cut closes the fence or <details> it falls in, so the note renders as text.
	note := fmt.Sprintf("\n\n… (truncated to %d bytes: the full report is report/schedule.md in the log dir)\n", MaxTextBytes)
	summary = mdcut.Cut(summary, MaxTextBytes, note)
	return title, summary
}

// annotate sends the annotations that did not fit the create, 50 an update; each resends name, title and summary,
// as an update without a name renames the run to "".
func (s *session) annotate(ctx context.Context, o *Outcome, id int64, name, title, summary string, rest []*github.CheckRunAnnotation) error {
	for len(rest) > 0 {
		var chunk []*github.CheckRunAnnotation
		chunk, rest = split(rest)
		upd := github.UpdateCheckRunOptions{
			Name: name,
			Output: &github.CheckRunOutput{
				Title:       github.String(title),
				Summary:     github.String(summary),
				Annotations: chunk,
			},
		}
		if _, _, err := s.gh.Checks.UpdateCheckRun(ctx, s.owner, s.repo, id, upd); err != nil {
			return s.classify(o, err, "check run annotations", "checks: write", "")
		}
	}
	return nil
}

func checkName(r Request) string {
	switch {
	case r.Name != "":
		return r.Name
	case r.Job != "":
		return "sgpu-queue (" + r.Job + ")"
	}
	return "sgpu-queue"
}

func split(a []*github.CheckRunAnnotation) (head, tail []*github.CheckRunAnnotation) {
	if len(a) <= PerRequest {
		return a, nil
	}
	return a[:PerRequest], a[PerRequest:]
}

// Annotations are one failure annotation per failed test at its place, then one per failed item at its suite's
// config line.
func Annotations(r Request) []*github.CheckRunAnnotation {
	fallback := repoPath(r.WorkflowPath)
	if fallback == "" {
		fallback = ".github/workflows"
	}
	place := func(p string, line int) (string, int) {
		if p = repoPath(p); p == "" {
			return fallback, 1
		}
		return p, max(line, 1)
	}
	anns := make([]*github.CheckRunAnnotation, 0, len(r.Tests)+len(r.Failures))
	for _, f := range r.Tests {
		p, line := place(f.Path, f.Line)
		anns = append(anns, annotation(p, line, f.Title, f.Message))
	}
	for _, f := range r.Failures {
		p, line := place(f.Path, f.Line)
		item := f.Item
		if item == "" {
			item = f.Suite
		}
		var msg strings.Builder
		fmt.Fprintf(&msg, "%s failed in suite %s: rc=%d", item, f.Suite, f.RC)
		if f.Note != "" {
			fmt.Fprintf(&msg, " (%s)", f.Note)
		}
		if f.Log != "" {
			fmt.Fprintf(&msg, "\nlog: %s", f.Log)
		}
		anns = append(anns, annotation(p, line, item, msg.String()))
	}
	return anns
}

// annotation is one failure annotation cut to the API's limits.
func annotation(path string, line int, title, msg string) *github.CheckRunAnnotation {
	return &github.CheckRunAnnotation{
		Path:            github.String(path),
		StartLine:       github.Int(line),
		EndLine:         github.Int(line),
		AnnotationLevel: github.String("failure"),
		Title:           github.String(textfmt.Truncate(textfmt.OneLine(title), MaxTitle, "…")),
		Message:         github.String(textfmt.Truncate(msg, MaxMessage, "\n… (truncated)")),
	}
}

// repoPath returns p as a clean repository-relative path, or "": GitHub shows annotations on files only for those.
func repoPath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return ""
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// WorkflowPathFromRef returns the workflow file of GITHUB_WORKFLOW_REF (".github/workflows/ci.yml"), or "".
func WorkflowPathFromRef(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	parts := strings.SplitN(ref, "/", 3)
	if len(parts) != 3 {
		return ""
	}
	return repoPath(parts[2])
}
