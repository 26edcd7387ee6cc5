package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/rocm/sgpu-queue/internal/mdcut"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Comment keeps one sticky comment per workflow and check name on PR r.PR, so each matrix leg has its own:
// it edits the one findComment finds, or creates one. A read-only token is a warning, not an error.
func Comment(ctx context.Context, r Request) (o Outcome, err error) {
	if r.PR <= 0 {
		o.Notes = append(o.Notes, "not a pull request: no PR comment (a workflow_run job passes the pr-number input)")
		return o, nil
	}
	s, err := newSession(r)
	if err != nil {
		return o, err
	}
	defer func() { o.Notes = append(o.Notes, s.retryNotes()...) }()
	marker := Marker(r.Workflow, checkName(r))
	body := CommentBody(r)

	found, err := s.findComment(ctx, r.PR, marker)
	if err == nil && found == nil && r.CommentEditOnly {
		o.Notes = append(o.Notes, "no PR comment: nothing failed and nothing changed since the base branch's last run")
		return o, nil
	}
	var c *github.IssueComment
	if found != nil {
		c, _, err = s.gh.Issues.EditComment(ctx, s.owner, s.repo, found.GetID(), &github.IssueComment{Body: &body})
	}
	// A pasted copy of ours is a person's comment: GitHub refuses the edit, so ours is created beside it.
	if err == nil && found == nil || found != nil && forbidden(err) && !byBot(found) {
		c, _, err = s.gh.Issues.CreateComment(ctx, s.owner, s.repo, r.PR, &github.IssueComment{Body: &body})
	}
	if err != nil {
		err = s.classify(&o, err, "PR comment", "pull-requests: write", fmt.Sprintf("pull request #%d does not exist", r.PR))
		return o, err
	}
	o.Comment = c.GetHTMLURL()
	return o, nil
}

// findComment returns the comment on PR pr starting with marker: a bot's (the token's own) first, else the last, so a
// user token's comment created beside a pasted copy is found next time; nil if none.
func (s *session) findComment(ctx context.Context, pr int, marker string) (*github.IssueComment, error) {
	var last *github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCommentPage; page++ {
		list, resp, err := s.gh.Issues.ListComments(ctx, s.owner, s.repo, pr, opts)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			// A prefix, not a substring: quoting our comment does not make a comment the sticky one.
			if !strings.HasPrefix(c.GetBody(), marker) {
				continue
			}
			if byBot(c) {
				return c, nil
			}
			last = c
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return last, nil
}

// byBot says whether a bot (an app's token, github-actions[bot]) wrote c.
func byBot(c *github.IssueComment) bool { return c.GetUser().GetType() == "Bot" }

// forbidden says whether err is GitHub's 403 that is not a rate limit.
func forbidden(err error) bool {
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden
}

// Marker is the sticky comment's hidden first line, <!-- sgpu-queue:WORKFLOW/NAME -->, names %-escaped so
// nothing can break the HTML comment.
func Marker(workflow, name string) string {
	return "<!-- sgpu-queue:" + markerKey(workflow, name) + " -->"
}

func markerKey(workflow, name string) string {
	return escapeKey(workflow) + "/" + escapeKey(name)
}

func escapeKey(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, c := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case c == '%' || c == '/' || c == '<' || c == '>' || (c == '-' && prev == '-') || c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
			c = 0
		default:
			b.WriteRune(c)
		}
		prev = c
	}
	return b.String()
}

// CommentBody is the sticky comment's text: marker, title, report (cut to the API limit) and a link to the run.
func CommentBody(r Request) string {
	var head, foot strings.Builder
	head.WriteString(Marker(r.Workflow, checkName(r)))
	head.WriteString("\n")
	if r.Title != "" && r.Comment == "" {
		fmt.Fprintf(&head, "**%s**\n\n", textfmt.OneLine(r.Title))
	}
	foot.WriteString("\n\n---\n<sub>sgpu-queue")
	if r.Workflow != "" || r.Job != "" || r.Name != "" {
		fmt.Fprintf(&foot, " · %s / %s", textfmt.OneLine(r.Workflow), textfmt.OneLine(checkName(r)))
	}
	if len(r.SHA) >= 7 {
		fmt.Fprintf(&foot, " · commit %s", r.SHA[:7])
	}
	if r.DetailsURL != "" {
		fmt.Fprintf(&foot, " · [run details](%s)", r.DetailsURL)
	}
	foot.WriteString(" · this comment is updated in place on every run</sub>\n")

	room := MaxTextBytes - len(head.String()) - len(foot.String())
	if room < 0 {
		room = 0
	}
	text := r.Summary
	if r.Comment != "" {
		text = r.Comment
	}
	summary := strings.TrimRight(text, "\n")
	summary = mdcut.Cut(summary, room, "\n\n… (truncated: the full report is report/schedule.md in the log dir)")
	return textfmt.Truncate(head.String()+summary+foot.String(), MaxTextBytes, "")
}
