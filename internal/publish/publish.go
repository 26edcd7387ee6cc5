// Package publish puts the sgpu-queue report on a pull request: a check run
// whose summary is the report and whose annotations are the failed items, and
// one sticky comment per workflow/job that is edited in place on every run.
//
// It talks to the GitHub REST API through go-github. Publishing is best effort:
// the job summary always has the report, so a read-only token (pull requests
// from forks) yields a warning in Outcome, not an error; other failures come
// back as errors for the caller to print as warnings. The token is never
// printed: every message that leaves this package is scrubbed of it.
package publish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
)

// Failure is one failed item, as the check run annotates it.
type Failure struct {
	Suite, Item, Log string
	RC               int
	Note             string
	// Path and Line locate the annotation: the repository-relative path of
	// the config file that declares the suite, and the suite's line in it
	// (config.Suite.File relative to GITHUB_WORKSPACE, config.Suite.Line).
	// When Path is empty, absolute or outside the repository,
	// Request.WorkflowPath line 1 is used instead.
	Path string
	Line int
}

// Request is what to publish and where.
type Request struct {
	Token  string // never logged
	APIURL string // GITHUB_API_URL; "" means https://api.github.com/
	Repo   string // owner/name (GITHUB_REPOSITORY)
	// SHA is the commit the check run is attached to. For pull_request
	// events it must be the PR head sha from the event payload (PRFromEvent):
	// GITHUB_SHA is then the test merge commit, which the PR page never shows.
	SHA string
	// PR is the pull request number; 0 when the run is not for a PR (the
	// comment is then skipped with a note).
	PR            int
	Workflow, Job string // GITHUB_WORKFLOW, GITHUB_JOB: key of the sticky comment marker
	Title         string // e.g. "sgpu-queue: 3 failed of 80"
	Summary       string // the report markdown; truncated to the API limit with a note
	Conclusion    string // "success" | "failure" | "cancelled" (or another check-run conclusion)
	Failures      []Failure
	DetailsURL    string // GITHUB_SERVER_URL/REPO/actions/runs/RUN_ID

	// Name is the check run's name; "" means "sgpu-queue (JOB)", or
	// "sgpu-queue" without a job. Matrix jobs share GITHUB_JOB, so give each
	// leg its own name.
	Name string
	// WorkflowPath is the repository-relative workflow file (see
	// WorkflowPathFromRef), where failures without a config location are
	// annotated. "" means ".github/workflows"; GitHub then lists the
	// annotation on the check run page only.
	WorkflowPath string
	// Timeout bounds each API request; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Outcome says what was done.
type Outcome struct {
	Check    string   // HTML URL of the check run, "" if none was made
	Comment  string   // HTML URL of the comment, "" if none was made
	Warnings []string // for the caller to print as ::warning::
	Notes    []string // for the caller to print as plain log lines
}

// Limits of the GitHub API (REST docs: check runs, issue comments).
const (
	MaxTextBytes   = 65535    // output.summary, and a comment body (counted in bytes here: never over the character limit)
	MaxMessage     = 64 << 10 // annotation message
	MaxTitle       = 255      // annotation title
	PerRequest     = 50       // annotations per create/update request
	MaxAnnotations = 10 * PerRequest
	DefaultTimeout = 30 * time.Second
	maxCommentPage = 100 // pages of 100 comments searched for the marker
	defaultAPIURL  = "https://api.github.com/"
)

// repoName is what GitHub allows in an owner or repository name; anything
// else would change the API path.
var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// session is a ready client for one call of Check or Comment.
type session struct {
	gh          *github.Client
	owner, repo string
	token       string
	timeout     time.Duration
}

func newSession(r Request) (*session, error) {
	if r.Token == "" {
		return nil, errors.New("no GitHub token: set the github-token input (default ${{ github.token }})")
	}
	if strings.IndexFunc(r.Token, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0 {
		return nil, errors.New("the GitHub token contains whitespace or control characters: pass the token alone")
	}
	owner, repo, ok := strings.Cut(r.Repo, "/")
	if !ok || !repoName.MatchString(owner) || !repoName.MatchString(repo) {
		return nil, fmt.Errorf("repository %q is not owner/name: set GITHUB_REPOSITORY", r.Repo)
	}
	api := r.APIURL
	if api == "" {
		api = defaultAPIURL
	}
	base, err := url.Parse(api)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("API URL %q is not an http(s) URL: set GITHUB_API_URL", api)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/" // go-github refuses a BaseURL without it
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hc := &http.Client{
		Transport: &authTransport{host: base.Host, auth: "Bearer " + r.Token, next: http.DefaultTransport},
		Timeout:   timeout,
		// The API never redirects these calls across hosts; refusing that
		// keeps the token from following a redirect somewhere else.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != base.Host {
				return fmt.Errorf("refusing a redirect from %s to another host", base.Host)
			}
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
	gh := github.NewClient(hc)
	gh.BaseURL = base
	gh.UserAgent = "sgpu-queue (go-github/" + github.Version + ")"
	return &session{gh: gh, owner: owner, repo: repo, token: r.Token, timeout: timeout}, nil
}

// authTransport adds the token to requests for the API host only, so that no
// other host ever sees it (go-github's WithAuthToken adds it to every request).
type authTransport struct {
	host, auth string
	next       http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.host {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", t.auth)
	}
	return t.next.RoundTrip(req)
}

// call runs one API request under the per-request timeout.
func (s *session) call(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return f(ctx)
}

// classify turns an API error into a warning (read-only token) or an error.
// what names the thing ("check run", "PR comment"), perm the permission it
// needs, missing what a 404 may mean besides an unseen repository.
func (s *session) classify(err error, what, perm, missing string) (warning string, _ error) {
	var er *github.ErrorResponse
	// Rate limits also answer 403, but go-github returns them as
	// *RateLimitError / *AbuseRateLimitError, so they stay errors here.
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusForbidden:
			// A fork PR's token is read-only: GitHub answers 403 "Resource not
			// accessible by integration" to every write. A workflow whose
			// permissions block lacks the scope gets the same answer.
			w := fmt.Sprintf("cannot publish the %s: the token is read-only (fork PR? otherwise grant `%s`); the report is in the job summary", what, perm)
			if m := er.Message; m != "" && m != "Resource not accessible by integration" {
				w += " (GitHub: " + oneLine(m) + ")"
			}
			return s.scrub(w), nil
		case http.StatusNotFound:
			// GitHub answers 404, not 403, where the token may not even see
			// the resource (a private repository), to hide that it exists.
			msg := fmt.Sprintf("cannot publish the %s: GitHub answered 404 Not Found (%s): the token cannot see %s/%s (check GITHUB_REPOSITORY and the token's access)", what, requestLine(er), s.owner, s.repo)
			if missing != "" {
				msg += " or " + missing
			}
			return "", s.wrap(err, msg)
		}
		return "", s.wrap(err, fmt.Sprintf("cannot publish the %s: %s: %d %s", what, requestLine(er), er.Response.StatusCode, oneLine(er.Message)))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "", s.wrap(err, fmt.Sprintf("cannot publish the %s: no answer from the GitHub API within %s", what, s.timeout))
	}
	return "", s.wrap(err, fmt.Sprintf("cannot publish the %s: %s", what, oneLine(err.Error())))
}

// requestLine names the request of an error answer: "POST https://…/check-runs".
func requestLine(er *github.ErrorResponse) string {
	if req := er.Response.Request; req != nil && req.URL != nil {
		u := *req.URL
		u.RawQuery = "" // only paging parameters; keeps the line short
		return req.Method + " " + u.String()
	}
	return "request"
}

// redacted is an error whose message was scrubbed of the token.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

func (s *session) wrap(err error, msg string) error { return &redacted{msg: s.scrub(msg), err: err} }

func (s *session) scrub(msg string) string {
	if s.token == "" {
		return msg
	}
	return strings.ReplaceAll(msg, s.token, "***")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s so that s plus note fits max bytes, at a rune boundary,
// and appends note; s is returned unchanged when it fits.
func truncate(s string, max int, note string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	if len(note) > max {
		note = ""
	}
	cut := max - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}
