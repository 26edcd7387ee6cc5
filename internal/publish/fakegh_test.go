package publish

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeGitHub is a local server speaking the parts of the GitHub REST API that
// publish uses, checking requests the way the real API does (routes, methods,
// auth, headers, required payload fields and limits) and keeping state, so
// that a second call sees what the first one made. A request the real API
// would reject fails the test and gets the API's error answer.
type fakeGitHub struct {
	t     *testing.T
	srv   *httptest.Server
	token string
	user  string // whom the token's comments are by; "" is botUser

	mu       sync.Mutex
	log      []apiCall
	nextID   int64
	runs     map[int64]*fakeRun
	comments map[int][]*fakeComment // PR number → comments, oldest first
	inject   map[string][]injected  // route → answers to give instead, in order
}

type apiCall struct {
	Method, Path, Query string
	Body                map[string]any
}

type fakeRun struct {
	ID                         int64
	Name, HeadSHA, Status      string
	Conclusion, Title, Summary string
	DetailsURL, ExternalID     string
	Annotations                []wireAnnotation
	Creates, Updates           int
	CompletedAt                string
}

// botUser is who GITHUB_TOKEN's comments are by.
const botUser = "github-actions[bot]"

func (g *fakeGitHub) tokenUser() string {
	if g.user == "" {
		return botUser
	}
	return g.user
}

func userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	return "User"
}

type fakeComment struct {
	ID         int64
	Body, User string
}

type injected struct {
	status int
	body   string
	header map[string]string
}

// wire formats, as documented for the REST API.
type wireOutput struct {
	Title       *string          `json:"title"`
	Summary     *string          `json:"summary"`
	Text        *string          `json:"text"`
	Annotations []wireAnnotation `json:"annotations"`
	Images      []any            `json:"images"`
}

type wireAnnotation struct {
	Path            *string `json:"path"`
	StartLine       *int    `json:"start_line"`
	EndLine         *int    `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel *string `json:"annotation_level"`
	Message         *string `json:"message"`
	Title           *string `json:"title"`
	RawDetails      *string `json:"raw_details"`
}

type wireCheckRun struct {
	Name        *string     `json:"name"`
	HeadSHA     *string     `json:"head_sha"`
	DetailsURL  *string     `json:"details_url"`
	ExternalID  *string     `json:"external_id"`
	Status      *string     `json:"status"`
	StartedAt   *string     `json:"started_at"`
	Conclusion  *string     `json:"conclusion"`
	CompletedAt *string     `json:"completed_at"`
	Output      *wireOutput `json:"output"`
	Actions     []any       `json:"actions"`
}

const (
	fakeOwner, fakeRepo = "o", "r"
	readOnlyBody        = `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run","status":"403"}`
)

func newFakeGitHub(t *testing.T, token string) *fakeGitHub {
	g := &fakeGitHub{t: t, token: token, nextID: 1000, runs: map[int64]*fakeRun{},
		comments: map[int][]*fakeComment{}, inject: map[string][]injected{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/{owner}/{repo}/check-runs", g.route("create-check-run", g.createRun))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", g.route("update-check-run", g.updateRun))
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", g.route("list-comments", g.listComments))
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", g.route("create-comment", g.createComment))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", g.route("edit-comment", g.editComment))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected API call %s %s", r.Method, r.URL.Path)
		apiError(w, http.StatusNotFound, "Not Found")
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

// URL is the API base as GITHUB_API_URL would give it (no trailing slash).
func (g *fakeGitHub) URL() string { return g.srv.URL }

// failNext makes the next call of route answer status with body.
func (g *fakeGitHub) failNext(route string, status int, body string, header map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inject[route] = append(g.inject[route], injected{status, body, header})
}

// run returns a copy of check run id (zero if there is none).
func (g *fakeGitHub) run(id int64) fakeRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.runs[id]; r != nil {
		c := *r
		c.Annotations = append([]wireAnnotation(nil), r.Annotations...)
		return c
	}
	return fakeRun{}
}

func (g *fakeGitHub) calls() []apiCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]apiCall(nil), g.log...)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest","status":"%d"}`, msg, status)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-RateLimit-Limit", "1000")
	w.Header().Set("X-RateLimit-Remaining", "999")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// route checks what every API request must carry, logs the call, and hands
// it to h unless an injected answer is due.
func (g *fakeGitHub) route(name string, h func(http.ResponseWriter, *http.Request, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := g.t
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("%s: reading body: %v", name, err)
		}
		call := apiCall{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &call.Body); err != nil {
				t.Errorf("%s: body is not JSON: %v", name, err)
				apiError(w, http.StatusBadRequest, "Problems parsing JSON")
				return
			}
		}
		g.mu.Lock()
		g.log = append(g.log, call)
		var inj *injected
		if q := g.inject[name]; len(q) > 0 {
			inj, g.inject[name] = &q[0], q[1:]
		}
		g.mu.Unlock()

		if got := r.Header.Get("Authorization"); got != "Bearer "+g.token {
			t.Errorf("%s: Authorization header is not the Bearer token", name)
			apiError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if got := r.Header.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
			t.Errorf("%s: X-GitHub-Api-Version = %q", name, got)
		}
		if a := r.Header.Get("Accept"); !strings.HasPrefix(a, "application/vnd.github") {
			t.Errorf("%s: Accept = %q, want a GitHub media type", name, a)
		}
		if !strings.HasPrefix(r.Header.Get("User-Agent"), "sgpu-queue") {
			t.Errorf("%s: User-Agent = %q", name, r.Header.Get("User-Agent"))
		}
		if len(body) > 0 && r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type = %q", name, r.Header.Get("Content-Type"))
		}
		if r.PathValue("owner") != fakeOwner || r.PathValue("repo") != fakeRepo {
			apiError(w, http.StatusNotFound, "Not Found")
			return
		}
		if inj != nil {
			for k, v := range inj.header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(inj.status)
			io.WriteString(w, inj.body)
			return
		}
		h(w, r, body)
	}
}

// invalid answers 422 as the API does, and fails the test: publish must
// never send what the real API rejects.
func (g *fakeGitHub) invalid(w http.ResponseWriter, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	g.t.Errorf("request the API would reject: %s", msg)
	apiError(w, http.StatusUnprocessableEntity, "Invalid request.\n\n"+msg)
}

var (
	runStatuses    = map[string]bool{"queued": true, "in_progress": true, "completed": true}
	runConclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true,
		"skipped": true, "timed_out": true, "action_required": true}
	levels = map[string]bool{"notice": true, "warning": true, "failure": true}
)

// checkOutput applies the documented rules of the check-run output object.
func (g *fakeGitHub) checkOutput(w http.ResponseWriter, o *wireOutput) bool {
	if o == nil {
		return true
	}
	if o.Title == nil || o.Summary == nil {
		g.invalid(w, "output needs title and summary")
		return false
	}
	if n := utf8.RuneCountInString(*o.Summary); n > 65535 {
		g.invalid(w, "output.summary is %d characters, over 65535", n)
		return false
	}
	if len(o.Annotations) > 50 {
		g.invalid(w, "%d annotations in one request, over 50", len(o.Annotations))
		return false
	}
	for i, a := range o.Annotations {
		switch {
		case a.Path == nil || *a.Path == "" || a.StartLine == nil || a.EndLine == nil || a.AnnotationLevel == nil || a.Message == nil:
			g.invalid(w, "annotation %d misses a required field (path, start_line, end_line, annotation_level, message)", i)
			return false
		case !levels[*a.AnnotationLevel]:
			g.invalid(w, "annotation %d: annotation_level %q", i, *a.AnnotationLevel)
			return false
		case *a.StartLine < 1 || *a.EndLine < *a.StartLine:
			g.invalid(w, "annotation %d: lines %d-%d", i, *a.StartLine, *a.EndLine)
			return false
		case len(*a.Message) > 64<<10:
			g.invalid(w, "annotation %d: message over 64 KB", i)
			return false
		case a.Title != nil && utf8.RuneCountInString(*a.Title) > 255:
			g.invalid(w, "annotation %d: title over 255 characters", i)
			return false
		}
	}
	return true
}

func (g *fakeGitHub) createRun(w http.ResponseWriter, r *http.Request, body []byte) {
	var in wireCheckRun
	if err := json.Unmarshal(body, &in); err != nil {
		g.invalid(w, "check run: %v", err)
		return
	}
	switch {
	case in.Name == nil || *in.Name == "":
		g.invalid(w, "name is required")
		return
	case in.HeadSHA == nil || *in.HeadSHA == "":
		g.invalid(w, "head_sha is required")
		return
	case in.Status != nil && !runStatuses[*in.Status]:
		g.invalid(w, "status %q", *in.Status)
		return
	case in.Status != nil && *in.Status == "completed" && (in.Conclusion == nil || !runConclusions[*in.Conclusion]):
		g.invalid(w, "a completed run needs a valid conclusion")
		return
	}
	if !g.checkOutput(w, in.Output) {
		return
	}
	g.mu.Lock()
	g.nextID++
	run := &fakeRun{ID: g.nextID, Name: *in.Name, HeadSHA: *in.HeadSHA, Status: "queued", Creates: 1}
	g.runs[run.ID] = run
	g.apply(run, in)
	resp := g.runJSON(run)
	g.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

func (g *fakeGitHub) updateRun(w http.ResponseWriter, r *http.Request, body []byte) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in wireCheckRun
	if err := json.Unmarshal(body, &in); err != nil {
		g.invalid(w, "check run: %v", err)
		return
	}
	if in.HeadSHA != nil {
		g.invalid(w, "head_sha cannot be updated")
		return
	}
	if !g.checkOutput(w, in.Output) {
		return
	}
	g.mu.Lock()
	run := g.runs[id]
	if run == nil {
		g.mu.Unlock()
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	if in.Name != nil {
		// The API renames the run to whatever is sent, "" included: the trap
		// the docs warn about.
		if *in.Name != run.Name {
			g.t.Errorf("update renames check run %q to %q", run.Name, *in.Name)
		}
		run.Name = *in.Name
	} else {
		g.t.Errorf("update of check run %d sends no name", id)
	}
	run.Updates++
	g.apply(run, in)
	resp := g.runJSON(run)
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

func (g *fakeGitHub) apply(run *fakeRun, in wireCheckRun) {
	if in.Status != nil {
		run.Status = *in.Status
	}
	if in.Conclusion != nil {
		run.Conclusion = *in.Conclusion
	}
	if in.DetailsURL != nil {
		run.DetailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		run.ExternalID = *in.ExternalID
	}
	if in.CompletedAt != nil {
		run.CompletedAt = *in.CompletedAt
	}
	if o := in.Output; o != nil {
		run.Title, run.Summary = *o.Title, *o.Summary
		run.Annotations = append(run.Annotations, o.Annotations...) // the API appends
	}
}

func (g *fakeGitHub) runJSON(run *fakeRun) map[string]any {
	return map[string]any{
		"id": run.ID, "node_id": fmt.Sprintf("CR_%d", run.ID), "name": run.Name, "head_sha": run.HeadSHA,
		"status": run.Status, "conclusion": run.Conclusion, "external_id": run.ExternalID,
		"url":      fmt.Sprintf("%s/repos/o/r/check-runs/%d", g.srv.URL, run.ID),
		"html_url": fmt.Sprintf("https://github.com/o/r/runs/%d", run.ID),
		"output": map[string]any{"title": run.Title, "summary": run.Summary,
			"annotations_count": len(run.Annotations),
			"annotations_url":   fmt.Sprintf("%s/repos/o/r/check-runs/%d/annotations", g.srv.URL, run.ID)},
		"app": map[string]any{"slug": "github-actions"},
	}
}

func (g *fakeGitHub) commentJSON(pr int, c *fakeComment) map[string]any {
	return map[string]any{
		"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User, "type": userType(c.User)},
		"html_url":  fmt.Sprintf("https://github.com/o/r/pull/%d#issuecomment-%d", pr, c.ID),
		"issue_url": fmt.Sprintf("%s/repos/o/r/issues/%d", g.srv.URL, pr),
	}
}

// seedComments adds n comments by others to pr.
func (g *fakeGitHub) seedComments(pr, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < n; i++ {
		g.nextID++
		g.comments[pr] = append(g.comments[pr], &fakeComment{ID: g.nextID, User: "reviewer",
			Body: fmt.Sprintf("review remark %d", i)})
	}
}

func (g *fakeGitHub) prComments(pr int) []fakeComment {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []fakeComment
	for _, c := range g.comments[pr] {
		out = append(out, *c)
	}
	return out
}

// listComments pages as the API does: per_page (default 30, at most 100),
// page (from 1), and a Link header with next/last/first/prev that, like the
// real one, points at /repositories/{id}/… rather than the request path.
func (g *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request, _ []byte) {
	pr, _ := strconv.Atoi(r.PathValue("n"))
	q := r.URL.Query()
	per, page := 30, 1
	if v := q.Get("per_page"); v != "" {
		per, _ = strconv.Atoi(v)
	}
	if v := q.Get("page"); v != "" {
		page, _ = strconv.Atoi(v)
	}
	if per < 1 || per > 100 {
		per = 100
	}
	if page < 1 {
		page = 1
	}
	g.mu.Lock()
	all := g.comments[pr]
	last := (len(all) + per - 1) / per
	var list []map[string]any
	for i := (page - 1) * per; i < len(all) && i < page*per; i++ {
		list = append(list, g.commentJSON(pr, all[i]))
	}
	g.mu.Unlock()
	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s/repositories/642143951/issues/%d/comments?page=%d&per_page=%d>; rel="%s"`, g.srv.URL, pr, p, per, rel)
	}
	var links []string
	if page > 1 {
		links = append(links, link(page-1, "prev"))
	}
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	if list == nil {
		list = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, list)
}

func (g *fakeGitHub) commentBody(w http.ResponseWriter, body []byte) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Body == nil || *in.Body == "" {
		g.invalid(w, "comment needs a body")
		return "", false
	}
	if n := utf8.RuneCountInString(*in.Body); n > 65536 {
		g.invalid(w, "comment body is %d characters, over 65536", n)
		return "", false
	}
	return *in.Body, true
}

func (g *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request, body []byte) {
	pr, _ := strconv.Atoi(r.PathValue("n"))
	text, ok := g.commentBody(w, body)
	if !ok {
		return
	}
	g.mu.Lock()
	g.nextID++
	c := &fakeComment{ID: g.nextID, Body: text, User: g.tokenUser()}
	g.comments[pr] = append(g.comments[pr], c)
	resp := g.commentJSON(pr, c)
	g.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

func (g *fakeGitHub) editComment(w http.ResponseWriter, r *http.Request, body []byte) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	text, ok := g.commentBody(w, body)
	if !ok {
		return
	}
	g.mu.Lock()
	for pr, list := range g.comments {
		for _, c := range list {
			if c.ID == id {
				if c.User != g.tokenUser() { // as GitHub: a token edits only its own comments
					g.mu.Unlock()
					apiError(w, http.StatusForbidden, "Resource not accessible by integration")
					return
				}
				c.Body = text
				resp := g.commentJSON(pr, c)
				g.mu.Unlock()
				writeJSON(w, http.StatusOK, resp)
				return
			}
		}
	}
	g.mu.Unlock()
	apiError(w, http.StatusNotFound, "Not Found")
}
