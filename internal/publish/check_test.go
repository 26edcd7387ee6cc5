package publish

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testToken looks like a real GITHUB_TOKEN so a leak would be recognisable.
const testToken = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"

const testSHA = "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01"

func failures(n int) []Failure {
	fs := make([]Failure, n)
	for i := range fs {
		fs[i] = Failure{
			Suite: "torch", Item: fmt.Sprintf("tests/pytorch/test_numerics.py::test_gemm[%d]", i),
			Log: fmt.Sprintf("test-results/logs/torch/items/%03d.log", i), RC: 1,
			Path: "ci/sgpu-queue.conf", Line: 2,
		}
		if i%7 == 3 {
			fs[i].RC, fs[i].Note = 124, "timeout after 600 s"
		}
	}
	return fs
}

func request(g *fakeGitHub, n int) Request {
	return Request{
		Token: testToken, APIURL: g.URL(), Repo: "o/r", SHA: testSHA, PR: 7,
		Workflow: "rocm-ci", Job: "queue",
		Title:      fmt.Sprintf("sgpu-queue: %d failed of 80", n),
		Summary:    "## ✗ sgpu-queue: failed\n\nthe report\n",
		Conclusion: "failure", Failures: failures(n),
		DetailsURL: "https://github.com/o/r/actions/runs/42",
		// Retries as in production, with waits short enough for a test.
		Retry: Retry{WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond},
	}
}

// assertNoToken fails when anything publish hands back shows the token.
func assertNoToken(t *testing.T, o Outcome, err error) {
	t.Helper()
	all := append(append([]string{o.Check, o.Comment}, o.Warnings...), o.Notes...)
	if err != nil {
		all = append(all, err.Error(), fmt.Sprintf("%+v", err))
	}
	for _, s := range all {
		if strings.Contains(s, testToken) {
			t.Fatalf("the token appears in %q", s)
		}
	}
}

func TestCheckAnnotationChunks(t *testing.T) {
	tests := []struct {
		failures int
		calls    []string // method path, in order
		stored   int      // annotations the run ends with
		warnings int
	}{
		{0, []string{"POST /repos/o/r/check-runs"}, 0, 0},
		{30, []string{"POST /repos/o/r/check-runs"}, 30, 0},
		{50, []string{"POST /repos/o/r/check-runs"}, 50, 0},
		{120, []string{"POST /repos/o/r/check-runs", "PATCH /repos/o/r/check-runs/1001", "PATCH /repos/o/r/check-runs/1001"}, 120, 0},
		{MaxAnnotations + 100, append([]string{"POST /repos/o/r/check-runs"}, repeat("PATCH /repos/o/r/check-runs/1001", MaxAnnotations/PerRequest-1)...), MaxAnnotations, 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.failures), func(t *testing.T) {
			g := newFakeGitHub(t, testToken)
			r := request(g, tc.failures)
			o, err := Check(context.Background(), r)
			assertNoToken(t, o, err)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if len(o.Warnings) != tc.warnings {
				t.Errorf("warnings = %q, want %d", o.Warnings, tc.warnings)
			}
			if o.Check != "https://github.com/o/r/runs/1001" {
				t.Errorf("Outcome.Check = %q", o.Check)
			}
			calls := g.calls()
			var got []string
			for _, c := range calls {
				got = append(got, c.Method+" "+c.Path)
			}
			if strings.Join(got, "\n") != strings.Join(tc.calls, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.calls, "\n"))
			}

			// The create carries the whole completed run.
			create := calls[0].Body
			for k, want := range map[string]any{"name": "sgpu-queue (queue)", "head_sha": testSHA, "status": "completed",
				"conclusion": "failure", "details_url": r.DetailsURL, "external_id": "rocm-ci/sgpu-queue (queue)"} {
				if create[k] != want {
					t.Errorf("create %s = %v, want %v", k, create[k], want)
				}
			}
			if _, err := time.Parse(time.RFC3339, fmt.Sprint(create["completed_at"])); err != nil {
				t.Errorf("create completed_at = %v: %v", create["completed_at"], err)
			}
			out, _ := create["output"].(map[string]any)
			if out["title"] != r.Title || out["summary"] != r.Summary {
				t.Errorf("create output title/summary = %v / %v", out["title"], out["summary"])
			}
			// Every update resends name, title and summary, and no head_sha.
			for _, c := range calls[1:] {
				if c.Body["name"] != "sgpu-queue (queue)" {
					t.Errorf("update name = %v", c.Body["name"])
				}
				if _, ok := c.Body["head_sha"]; ok {
					t.Errorf("update sends head_sha")
				}
				o, _ := c.Body["output"].(map[string]any)
				if o["title"] != r.Title || o["summary"] != r.Summary || len(o["annotations"].([]any)) == 0 {
					t.Errorf("update output = %v", o)
				}
			}

			run := g.run(1001)
			if run.Name != "sgpu-queue (queue)" || run.Status != "completed" || run.Conclusion != "failure" || run.HeadSHA != testSHA {
				t.Errorf("run = %+v", run)
			}
			if len(run.Annotations) != tc.stored {
				t.Fatalf("run has %d annotations, want %d", len(run.Annotations), tc.stored)
			}
			for i, a := range run.Annotations { // in order, none lost or doubled
				if *a.Title != r.Failures[i].Item || *a.Path != "ci/sgpu-queue.conf" || *a.StartLine != 2 || *a.AnnotationLevel != "failure" {
					t.Fatalf("annotation %d = %+v", i, a)
				}
				if !strings.Contains(*a.Message, r.Failures[i].Log) || !strings.Contains(*a.Message, fmt.Sprintf("rc=%d", r.Failures[i].RC)) {
					t.Fatalf("annotation %d message %q lacks log or rc", i, *a.Message)
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestCheckAPIErrors(t *testing.T) {
	rateHeaders := map[string]string{"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": fmt.Sprint(time.Now().Add(time.Hour).Unix())}
	tests := []struct {
		name      string
		route     string
		status    int
		body      string
		header    map[string]string
		times     int // answers injected (0: once)
		failures  int
		wantErr   string // substring; "" means no error
		wantWarn  string // substring of the only warning; "" means none
		wantCheck bool   // Outcome.Check set
	}{
		{"fork read-only token", "create-check-run", 403, readOnlyBody, map[string]string{"X-RateLimit-Remaining": "998"}, 0, 3,
			"", "cannot publish the check run: the token lacks `checks: write` (add it to the job's permissions; a pull request from a fork only gets a read-only token: publish from a workflow_run job, see the README)", false},
		{"403 with another message", "create-check-run", 403, `{"message":"Write access to repository not granted."}`, nil, 0, 3,
			"", "(GitHub: Write access to repository not granted.)", false},
		{"server error that persists", "create-check-run", 500, `{"message":"Server Error"}`, nil, DefaultRetries + 1, 3,
			"cannot publish the check run: POST " + "", "", false},
		{"not found", "create-check-run", 404, `{"message":"Not Found"}`, nil, 0, 3,
			"404 Not Found (POST http://127.0.0.1", "", false},
		{"bad credentials", "create-check-run", 401, `{"message":"Bad credentials"}`, nil, 0, 3,
			"401 Bad credentials", "", false},
		{"primary rate limit is no fork", "create-check-run", 403, `{"message":"API rate limit exceeded"}`, rateHeaders, 0, 3,
			"rate limit", "", false},
		{"secondary rate limit is no fork", "create-check-run", 403,
			`{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, nil, 0, 3,
			"secondary rate limit", "", false},
		{"update fails after create", "update-check-run", 502, `{"message":"Bad Gateway"}`, nil, DefaultRetries + 1, 80,
			"cannot publish the check run annotations", "", true},
		{"update read-only after create", "update-check-run", 403, readOnlyBody, nil, 0, 80,
			"", "cannot publish the check run annotations: the token lacks `checks: write`", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGitHub(t, testToken)
			for i := 0; i < max(tc.times, 1); i++ {
				g.failNext(tc.route, tc.status, tc.body, tc.header)
			}
			o, err := Check(context.Background(), request(g, tc.failures))
			assertNoToken(t, o, err)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if tc.wantWarn == "" && len(o.Warnings) != 0 {
				t.Errorf("warnings %q, want none", o.Warnings)
			}
			if tc.wantWarn != "" && (len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], tc.wantWarn)) {
				t.Errorf("warnings %q, want one containing %q", o.Warnings, tc.wantWarn)
			}
			if (o.Check != "") != tc.wantCheck {
				t.Errorf("Outcome.Check = %q, want set: %v", o.Check, tc.wantCheck)
			}
		})
	}
}

func TestCheckBadRequest(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	tests := []struct {
		name   string
		modify func(*Request)
		want   string
	}{
		{"no token", func(r *Request) { r.Token = "" }, "no GitHub token"},
		{"token with newline", func(r *Request) { r.Token = testToken + "\n" }, "whitespace or control"},
		{"repo without owner", func(r *Request) { r.Repo = "r" }, `repository "r" is not owner/name`},
		{"repo too deep", func(r *Request) { r.Repo = "o/r/x" }, "is not owner/name"},
		{"repo with a query", func(r *Request) { r.Repo = "o/r?x=1" }, "is not owner/name"},
		{"api url not http", func(r *Request) { r.APIURL = "ftp://example.com" }, "is not an http(s) URL"},
		{"api url unparsable", func(r *Request) { r.APIURL = "http://[::1" }, "is not an http(s) URL"},
		{"short sha", func(r *Request) { r.SHA = "9c1e5a7" }, "is not a commit id"},
		{"ref as sha", func(r *Request) { r.SHA = "refs/pull/7/merge" }, "is not a commit id"},
		{"conclusion", func(r *Request) { r.Conclusion = "failed" }, `conclusion "failed"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := request(g, 3)
			tc.modify(&r)
			o, err := Check(context.Background(), r)
			assertNoToken(t, o, err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if n := len(g.calls()); n != 0 {
		t.Errorf("bad requests made %d API calls", n)
	}
}

func TestCheckDefaultsAndTruncation(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 1)
	r.Job, r.Title = "", ""
	r.APIURL = g.URL() + "/" // a trailing slash is fine too
	// Over the limit, and made of multi-byte runes so that a byte cut could split one.
	r.Summary = strings.Repeat("é|", 40000)
	o, err := Check(context.Background(), r)
	assertNoToken(t, o, err)
	if err != nil {
		t.Fatal(err)
	}
	run := g.run(1001)
	if run.Name != "sgpu-queue" || run.Title != "sgpu-queue: failure" {
		t.Errorf("name %q title %q", run.Name, run.Title)
	}
	if len(run.Summary) > MaxTextBytes || !utf8.ValidString(run.Summary) || !strings.HasSuffix(run.Summary, "the full report is report/schedule.md in the log dir)\n") {
		t.Errorf("summary: %d bytes, valid %v, ends %q", len(run.Summary), utf8.ValidString(run.Summary), run.Summary[len(run.Summary)-60:])
	}

	r.Summary, r.Name = "  \n", "sgpu-queue / mi300"
	if _, err := Check(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if run := g.run(1002); run.Summary != "(no report)" || run.Name != "sgpu-queue / mi300" {
		t.Errorf("empty summary run = %+v", run)
	}
}

// Answers a later attempt can fix are retried with backoff, a bounded number of
// times, each retry noted; answers no retry can fix are not retried.
func TestCheckRetries(t *testing.T) {
	tests := []struct {
		name     string
		answers  []injected
		attempts int    // calls of create-check-run seen by the server
		wantErr  string // "" = the run is made
		notes    int
	}{
		{"502 then created", []injected{{status: 502, body: `{"message":"Bad Gateway"}`}}, 2, "", 1},
		{"503, 500, then created", []injected{{status: 503, body: `{}`}, {status: 500, body: `{}`}}, 3, "", 2},
		{"secondary rate limit with Retry-After", []injected{{status: 403, body: `{"message":"You have exceeded a secondary rate limit."}`, header: map[string]string{"Retry-After": "0"}}}, 2, "", 1},
		{"429 without headers", []injected{{status: 429, body: `{"message":"too many"}`}}, 2, "", 1},
		{"Retry-After too long", []injected{{status: 403, body: `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`, header: map[string]string{"Retry-After": "3600"}}}, 1, "secondary rate limit", 0},
		{"always 500", []injected{{status: 500, body: `{}`}, {status: 500, body: `{}`}, {status: 500, body: `{}`}, {status: 500, body: `{}`}, {status: 500, body: `{}`}, {status: 500, body: `{}`}}, DefaultRetries + 1, "500", DefaultRetries},
		{"422 is final", []injected{{status: 422, body: `{"message":"Validation Failed"}`}}, 1, "422", 0},
		{"501 is final", []injected{{status: 501, body: `{}`}}, 1, "501", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGitHub(t, testToken)
			for _, a := range tc.answers {
				g.failNext("create-check-run", a.status, a.body, a.header)
			}
			o, err := Check(context.Background(), request(g, 1))
			assertNoToken(t, o, err)
			n := 0
			for _, c := range g.calls() {
				if c.Method == "POST" && strings.HasSuffix(c.Path, "/check-runs") {
					n++
				}
			}
			if n != tc.attempts {
				t.Errorf("%d attempts at the server, want %d", n, tc.attempts)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if (o.Check != "") != (tc.wantErr == "") {
				t.Errorf("check run %q", o.Check)
			}
			if len(o.Notes) != tc.notes {
				t.Errorf("notes %q, want %d", o.Notes, tc.notes)
			}
		})
	}
}

// A hung API must not hang the step: every request has a deadline, and a request
// that timed out (it may have been done) is not sent again.
func TestCheckTimeout(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		io.Copy(io.Discard, r.Body) // then the server notices the client hanging up
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	r := Request{Token: testToken, APIURL: srv.URL, Repo: "o/r", SHA: testSHA, Conclusion: "success",
		Timeout: 50 * time.Millisecond, Retry: Retry{Max: 2, WaitMin: time.Millisecond, WaitMax: time.Millisecond}}
	o, err := Check(context.Background(), r)
	assertNoToken(t, o, err)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no answer from the GitHub API within 50ms (a request that timed out is not retried)") {
		t.Fatalf("error %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 || len(o.Notes) != 0 {
		t.Errorf("%d requests, notes %q: want one, no retry", requests, o.Notes)
	}
}

// TestUnreachableAPI: an API that refuses connections, or closes each without an
// answer, gets one retry per call, after NoAnswerWait, whatever Max says; the error
// says it could not be reached, typed, so that the caller skips the rest. The
// bound is the schedule of waits, not a measured time.
func TestUnreachableAPI(t *testing.T) {
	if got, want := (Retry{}).NoAnswerWaits(), []time.Duration{DefaultNoAnswerWait}; !reflect.DeepEqual(got, want) {
		t.Errorf("default no-answer waits %v, want %v", got, want)
	}
	var total time.Duration
	for _, w := range (Retry{}).NoAnswerWaits() {
		total += w
	}
	if worst := total + time.Duration(DefaultNoAnswer+1)*DialTimeout; worst > 10*time.Second {
		t.Errorf("an unreachable API may cost %s per call (waits %s, dial timeout %s)", worst, total, DialTimeout)
	}
	if got := (Retry{NoAnswer: -1}).NoAnswerWaits(); len(got) != 0 {
		t.Errorf("NoAnswer -1: waits %v", got)
	}

	refused := closedPort(t)
	hangUp, accepted := hangingUp(t)
	tests := []struct {
		name     string
		url      string
		accepted func() int // connections the server saw; nil: none can be counted
	}{
		{"connection refused", refused, nil},
		{"connection closed without an answer", hangUp, accepted},
	}
	for _, tc := range tests {
		for _, call := range []string{"check", "comment"} {
			t.Run(tc.name+"/"+call, func(t *testing.T) {
				before := 0
				if tc.accepted != nil {
					before = tc.accepted()
				}
				r := Request{Token: testToken, APIURL: tc.url, Repo: "o/r", SHA: testSHA, PR: 7, Conclusion: "failure",
					Retry: Retry{NoAnswerWait: time.Millisecond}} // Max and the rest as in production
				var o Outcome
				var err error
				if call == "check" {
					o, err = Check(context.Background(), r)
				} else {
					o, err = Comment(context.Background(), r)
				}
				assertNoToken(t, o, err)
				var ue *UnreachableError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the GitHub API cannot be reached (2 attempt(s))") {
					t.Fatalf("error %v, want an UnreachableError after 2 attempts", err)
				}
				if len(o.Notes) != DefaultNoAnswer || !strings.Contains(o.Notes[0], "retry 1 of 4 of ") || !strings.Contains(o.Notes[0], "after no answer") {
					t.Errorf("notes %q, want one retry", o.Notes)
				}
				if tc.accepted != nil {
					if n := tc.accepted() - before; n != 1+DefaultNoAnswer {
						t.Errorf("%d connections, want %d", n, 1+DefaultNoAnswer)
					}
				}
			})
		}
	}
}

// closedPort is a URL where nothing listens: connections are refused. The port is
// held on 127.0.0.1 for the test, so no parallel test's server can take it, and
// dialled on 127.0.0.2, where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return "http://127.0.0.2:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/"
}

// hangingUp is a URL whose server accepts each connection and closes it at once,
// and a count of the connections it accepted.
func hangingUp(t *testing.T) (string, func() int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr().String() + "/", func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// The token goes to the API host only, never along a redirect elsewhere.
func TestTokenStaysOnAPIHost(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":1}`)
	}))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	r := Request{Token: testToken, APIURL: api.URL, Repo: "o/r", SHA: testSHA, Conclusion: "success"}
	o, err := Check(context.Background(), r)
	assertNoToken(t, o, err)
	if err == nil || !strings.Contains(err.Error(), "refusing a redirect") {
		t.Errorf("error %v, want a refused redirect", err)
	}
	if len(leaked) != 0 {
		t.Errorf("the other host was called with Authorization %q", leaked)
	}
}

func TestCheckCancelled(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err := Check(ctx, request(g, 3))
	assertNoToken(t, o, err)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %v", err)
	}
}

func TestAnnotationsGolden(t *testing.T) {
	r := Request{
		WorkflowPath: ".github/workflows/rocm-ci.yml",
		Failures: []Failure{
			{Suite: "torch", Item: "tests/pytorch/test_fused_attn.py::test_dpa[bf16-2048]", Log: "test-results/logs/torch/items/007.log", RC: 1, Path: "ci/sgpu-queue.conf", Line: 3},
			{Suite: "jax", Item: "tests/jax/test_layer.py", Log: "test-results/logs/jax/items/001.log", RC: 124, Note: "timeout after 900 s", Path: "./ci/../ci/sgpu-queue.conf", Line: 4},
			{Suite: "core", Item: "", Log: "test-results/logs/core.log", RC: 139, Note: "killed by SIGSEGV", Path: "/github/workspace/ci/sgpu-queue.conf", Line: 5},
			{Suite: "examples", Item: "mnist", Log: "test-results/logs/examples.log", RC: 2, Note: "no XML written", Path: "../outside.conf"},
			{Suite: "torch", Item: strings.Repeat("tests/pytorch/test_numerics.py::test_gemm[", 8) + "]\nsecond line", Log: "x.log", RC: 1, Path: "ci/sgpu-queue.conf", Line: 0},
		},
	}
	got, err := json.MarshalIndent(Annotations(r), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "annotations.golden.json", append(got, '\n'))
	for _, a := range Annotations(r) {
		if len(*a.Title) > MaxTitle || strings.Contains(*a.Title, "\n") {
			t.Errorf("title %q", *a.Title)
		}
	}
}

func TestAnnotationMessageLimit(t *testing.T) {
	r := Request{Failures: []Failure{{Suite: "s", Item: "i", Note: strings.Repeat("ü", 40<<10), Log: "l"}}}
	a := Annotations(r)[0]
	if len(*a.Message) > MaxMessage || !utf8.ValidString(*a.Message) || !strings.HasSuffix(*a.Message, "(truncated)") {
		t.Errorf("message of %d bytes, ends %q", len(*a.Message), (*a.Message)[len(*a.Message)-20:])
	}
	if *a.Path != ".github/workflows" || *a.StartLine != 1 {
		t.Errorf("fallback location %s:%d", *a.Path, *a.StartLine)
	}
}

func TestRepoPath(t *testing.T) {
	tests := map[string]string{
		"ci/sgpu-queue.conf":    "ci/sgpu-queue.conf",
		"./ci/sgpu-queue.conf":  "ci/sgpu-queue.conf",
		"ci//a/../b.conf":       "ci/b.conf",
		"/abs/ci.conf":          "",
		"../up.conf":            "",
		"ci/../../up.conf":      "",
		".":                     "",
		"":                      "",
		"..":                    "",
		"..hidden/x":            "..hidden/x",
		".github/sgpu-queue.cf": ".github/sgpu-queue.cf",
	}
	for in, want := range tests {
		if got := repoPath(in); got != want {
			t.Errorf("repoPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWorkflowPathFromRef(t *testing.T) {
	tests := map[string]string{
		"ROCm/TransformerEngine/.github/workflows/rocm-ci.yml@refs/heads/dev": ".github/workflows/rocm-ci.yml",
		"o/r/.github/workflows/ci.yml@refs/pull/7/merge":                      ".github/workflows/ci.yml",
		"o/r/.github/workflows/ci.yml":                                        ".github/workflows/ci.yml",
		"o/r":                                                                 "",
		"":                                                                    "",
		"o/r/../../etc/passwd@x":                                              "",
	}
	for in, want := range tests {
		if got := WorkflowPathFromRef(in); got != want {
			t.Errorf("WorkflowPathFromRef(%q) = %q, want %q", in, got, want)
		}
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update)
}

// TestCheckTruncationClosesWhatItOpened: a report cut inside a log tail (a code
// fence in a <details>, multibyte text at the cut) reaches the API closed: the note
// renders after the fence and the </details>, not inside them.
func TestCheckTruncationClosesWhatItOpened(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 1)
	r.Summary = "## ✗ sgpu-queue\n\n<details><summary>Last lines of <code>items/a.log</code></summary>\n\n````text\n```\n</details>\n" +
		strings.Repeat("ünïcödé ≥ 𝛼 line\n", 8000) + "````\n\n</details>\n"
	if _, err := Check(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	s := g.run(1001).Summary
	want := "\n````\n\n</details>\n\n\n… (truncated to 65535 bytes: the full report is report/schedule.md in the log dir)\n"
	if len(s) > MaxTextBytes || !utf8.ValidString(s) || !strings.HasSuffix(s, want) {
		t.Errorf("summary of %d bytes, valid %v, ends %q; want it to end %q", len(s), utf8.ValidString(s), s[max(0, len(s)-150):], want)
	}
}

// A failed test is annotated at its place, titled with its id, before the items no
// test stands for; one with no place in the repository goes to the workflow file.
func TestTestAnnotations(t *testing.T) {
	r := Request{WorkflowPath: ".github/workflows/ci.yml",
		Tests: []TestFailure{
			{Path: "tests/pytorch/test_numerics.py", Line: 412, Title: "tests/pytorch/test_numerics.py::test_x[1]", Message: "failed"},
			{Path: "tests/pytorch/test_gemm.py", Title: "tests/pytorch/test_gemm.py::t", Message: "died in it"},
			{Path: "/__w/TE/TE/x.py", Line: 3, Title: "x", Message: "m"},
		},
		Failures: []Failure{{Suite: "core", Item: "(whole suite)", RC: 1, Path: "ci/ci.conf", Line: 4}},
	}
	var got []string
	for _, a := range Annotations(r) {
		got = append(got, fmt.Sprintf("%s:%d %s", *a.Path, *a.StartLine, *a.Title))
	}
	want := []string{"tests/pytorch/test_numerics.py:412 tests/pytorch/test_numerics.py::test_x[1]",
		"tests/pytorch/test_gemm.py:1 tests/pytorch/test_gemm.py::t", ".github/workflows/ci.yml:1 x", "ci/ci.conf:4 (whole suite)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("annotations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
