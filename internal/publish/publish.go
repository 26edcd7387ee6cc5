// Package publish puts the report on a pull request: a check run with the failures as annotations, and one sticky
// comment per check name. It is best effort (docs/action.md): a token without the permission is a warning,
// retries go through go-retryablehttp, and no message that leaves the package holds the token.
package publish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Failure is one failed item, as the check run annotates it.
type Failure struct {
	Suite, Item, Log string
	RC               int
	Note             string
	// Path and Line locate the annotation at the suite's config line; an empty, absolute or outside Path uses
	// Request.WorkflowPath line 1.
	Path string
	Line int
}

// TestFailure is one failed test, annotated at its place in the repository (tests.Test.Where).
type TestFailure struct {
	// Path and Line place it (0: the first line); an empty, absolute or outside path goes to Request.WorkflowPath.
	Path  string
	Line  int
	Title string // the test's id
	// Message is its status, item and the first lines of its message.
	Message string
}

// Request is what to publish and where.
type Request struct {
	Token  string // never logged
	APIURL string // GITHUB_API_URL; "" means https://api.github.com/
	Repo   string // owner/name (GITHUB_REPOSITORY)
	// SHA is the check run's commit: for pull_request events the PR head sha (PRFromEvent), as GITHUB_SHA is then
	// the test merge commit, which the PR page never shows.
	SHA string
	// PR is the pull request number; 0 skips the comment, with a note.
	PR            int
	Workflow, Job string // GITHUB_WORKFLOW, GITHUB_JOB
	Title         string // e.g. "sgpu-queue: 3 failed of 80"
	Summary       string // the report markdown; truncated to the API limit with a note
	// Comment is the sticky comment's report; "" uses Summary. CommentEditOnly creates no comment
	// (docs/report.md, "The PR comment").
	Comment         string
	CommentEditOnly bool
	Conclusion      string // "success" | "failure" | "cancelled" (or another check-run conclusion)
	// Tests are the failed tests, annotated first; Failures the failed items no failed test stands for.
	Tests      []TestFailure
	Failures   []Failure
	DetailsURL string // GITHUB_SERVER_URL/REPO/actions/runs/RUN_ID

	// Name is the check run's name and, with Workflow, the sticky comment's key; matrix legs share GITHUB_JOB, so each
	// needs its own. "" means "sgpu-queue (JOB)".
	Name string
	// WorkflowPath is the repository-relative workflow file where unplaced failures are annotated;
	// "" means ".github/workflows" (shown on the check run page only).
	WorkflowPath string
	// Timeout bounds each attempt of an API request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retry says how often and how long to retry; zero fields take the defaults.
	Retry Retry
}

// Retry bounds one API request's retries: Max, with exponential waits or what Retry-After asks up to MaxServerWait.
// An API that does not answer at all gets NoAnswer retries per call, so it costs a step about a second
// (docs/report.md);
// a request that timed out after it was sent is not retried, as it may have been done.
type Retry struct {
	Max           int
	WaitMin       time.Duration
	WaitMax       time.Duration
	MaxServerWait time.Duration
	NoAnswer      int // < 0: none
	NoAnswerWait  time.Duration
}

// Defaults of Retry, and how long a connection may take.
const (
	DefaultRetries       = 4
	DefaultRetryWaitMin  = time.Second
	DefaultRetryWaitMax  = 16 * time.Second
	DefaultMaxServerWait = 60 * time.Second
	DefaultNoAnswer      = 1
	DefaultNoAnswerWait  = 500 * time.Millisecond
	DialTimeout          = 3 * time.Second // api.github.com connects in milliseconds from a runner
)

// NoAnswerWaits is the schedule of waits before the retries of a call whose API does not answer.
func (r Retry) NoAnswerWaits() []time.Duration {
	r = r.withDefaults()
	waits := make([]time.Duration, r.NoAnswer)
	for i := range waits {
		waits[i] = r.NoAnswerWait
	}
	return waits
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

// repoName is what GitHub allows in an owner or repository name; anything else would change the API path.
var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// session is a ready client for one call of Check or Comment.
type session struct {
	gh          *github.Client
	owner, repo string
	token       string
	timeout     time.Duration
	retry       Retry

	mu       sync.Mutex
	reason   string   // why the last attempt is retried
	notes    []string // one per retry
	noAnswer int      // retries made after no answer at all (Retry.NoAnswer)
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
	s := &session{owner: owner, repo: repo, token: r.Token, timeout: timeout, retry: r.Retry.withDefaults()}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	attempt := &http.Client{
		Transport: &authTransport{host: base.Host, auth: "Bearer " + r.Token, next: transport},
		Timeout:   timeout,
		// Refusing cross-host redirects keeps the token from following one elsewhere.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != base.Host {
				return &redirectError{fmt.Sprintf("refusing a redirect from %s to another host", base.Host)}
			}
			if len(via) >= 5 {
				return &redirectError{"too many redirects"}
			}
			return nil
		},
	}
	rc := &retryablehttp.Client{
		HTTPClient:     attempt,
		RetryMax:       s.retry.Max,
		RetryWaitMin:   s.retry.WaitMin,
		RetryWaitMax:   s.retry.WaitMax,
		CheckRetry:     s.checkRetry,
		Backoff:        s.backoff,
		RequestLogHook: s.noteRetry,
		ErrorHandler:   lastAnswer,
	}
	gh := github.NewClient(rc.StandardClient())
	gh.BaseURL = base
	gh.UserAgent = "sgpu-queue (go-github/" + github.Version + ")"
	s.gh = gh
	return s, nil
}

func (r Retry) withDefaults() Retry {
	if r.Max == 0 {
		r.Max = DefaultRetries
	}
	if r.Max < 0 {
		r.Max = 0
	}
	if r.WaitMin <= 0 {
		r.WaitMin = DefaultRetryWaitMin
	}
	if r.WaitMax <= 0 {
		r.WaitMax = DefaultRetryWaitMax
	}
	if r.MaxServerWait <= 0 {
		r.MaxServerWait = DefaultMaxServerWait
	}
	switch {
	case r.NoAnswer == 0:
		r.NoAnswer = DefaultNoAnswer
	case r.NoAnswer < 0:
		r.NoAnswer = 0
	}
	if r.NoAnswerWait <= 0 {
		r.NoAnswerWait = DefaultNoAnswerWait
	}
	return r
}

// lastAnswer hands go-github the last answer after the retries, so a 403 or 5xx stays an *ErrorResponse.
func lastAnswer(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	return resp, nil
}

// redirectError is a redirect refused; it is never retried.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// checkRetry retries what a later attempt can fix: 5xx but 501, a dropped connection, a secondary rate limit
// within MaxServerWait. A plain 403 or other 4xx is final.
func (s *session) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var re *redirectError
	if errors.As(err, &re) {
		return false, nil
	}
	retry := false
	var why string
	switch {
	case err != nil:
		retry, _ = retryablehttp.DefaultRetryPolicy(ctx, resp, err)
		why = "no answer (" + textfmt.OneLine(s.scrub(err.Error())) + ")"
		s.mu.Lock()
		retry = retry && !waitedOut(err) && s.noAnswer < s.retry.NoAnswer
		if retry {
			s.noAnswer++
		}
		s.mu.Unlock()
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
		wait, ok := serverWait(resp)
		switch {
		case ok && wait <= s.retry.MaxServerWait:
			retry, why = true, fmt.Sprintf("a rate limit (HTTP %d, wait %s)", resp.StatusCode, wait.Round(time.Second))
		case !ok && resp.StatusCode == http.StatusTooManyRequests:
			retry, why = true, "a rate limit (HTTP 429)"
		}
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		retry, why = true, fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	if retry {
		s.mu.Lock()
		s.reason = why
		s.mu.Unlock()
	}
	return retry, nil
}

// serverWait is how long the answer asks to wait: Retry-After, or an exhausted rate limit's reset.
func serverWait(resp *http.Response) (time.Duration, bool) {
	if v := resp.Header.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(time.Until(t), 0), true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Until(time.Unix(n, 0)), 0), true
		}
	}
	return 0, false
}

func (s *session) backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp == nil {
		return s.retry.NoAnswerWait // no answer at all: retried once, soon (Retry)
	}
	if wait, ok := serverWait(resp); ok {
		return wait
	}
	return retryablehttp.DefaultBackoff(min, max, attempt, resp)
}

// waitedOut reports whether err timed out after the request was sent.
func waitedOut(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// UnreachableError is a call that got no answer after its retries; the caller skips the rest of the step.
type UnreachableError struct {
	msg string
	err error
}

func (e *UnreachableError) Error() string { return e.msg }
func (e *UnreachableError) Unwrap() error { return e.err }

// noteRetry records each retry (attempt > 0) with what made it necessary.
func (s *session) noteRetry(_ retryablehttp.Logger, req *http.Request, attempt int) {
	if attempt == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf("GitHub API: retry %d of %d of %s %s after %s", attempt, s.retry.Max, req.Method, req.URL.Path,
		s.reason))
}

// retryNotes returns the notes of the retries made so far.
func (s *session) retryNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

// authTransport adds the token for the API host only (go-github's WithAuthToken adds it to every request).
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

// classify turns an API error into a warning on o (a read-only token) or an error; perm is the permission needed.
func (s *session) classify(o *Outcome, err error, what, perm, missing string) error {
	var er *github.ErrorResponse
	// go-github returns rate limits (also 403) as their own types, so they stay errors.
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusForbidden:
			// A fork PR's token, or a permissions block without the scope, gets 403 on every write.
			w := fmt.Sprintf("cannot publish the %s: the token lacks `%s` (add it to the job's permissions; a pull request from a fork only gets "+
				"a read-only token: publish from a workflow_run job, see the README)", what, perm)
			if m := er.Message; m != "" && m != "Resource not accessible by integration" {
				w += " (GitHub: " + textfmt.OneLine(m) + ")"
			}
			o.Warnings = append(o.Warnings, s.scrub(w))
			return nil
		case http.StatusNotFound:
			// GitHub answers 404, not 403, to hide a resource the token cannot see.
			msg := fmt.Sprintf("cannot publish the %s: GitHub answered 404 Not Found (%s): the token cannot see %s/%s (check GITHUB_REPOSITORY "+
				"and the token's access)", what, requestLine(er), s.owner, s.repo)
			if missing != "" {
				msg += " or " + missing
			}
			return s.wrap(err, msg)
		}
		return s.wrap(err, fmt.Sprintf("cannot publish the %s: %s: %d %s", what, requestLine(er), er.Response.StatusCode,
			textfmt.OneLine(er.Message)))
	}
	var re *redirectError
	var ne net.Error
	switch {
	case errors.As(err, &re) || !errors.As(err, &ne) || errors.Is(err, context.Canceled):
	case waitedOut(err):
		msg := fmt.Sprintf("cannot publish the %s: no answer from the GitHub API within %s (a request that timed out is not retried)",
			what, s.timeout)
		return &UnreachableError{s.scrub(msg), err}
	default:
		msg := fmt.Sprintf("cannot publish the %s: the GitHub API cannot be reached (%d attempt(s)): %s",
			what, s.noAnswer+1, textfmt.OneLine(err.Error()))
		return &UnreachableError{s.scrub(msg), err}
	}
	return s.wrap(err, fmt.Sprintf("cannot publish the %s: %s", what, textfmt.OneLine(err.Error())))
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
