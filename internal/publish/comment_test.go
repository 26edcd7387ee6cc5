package publish

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func callList(calls []apiCall) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "%s %s", c.Method, c.Path)
		if c.Query != "" {
			q, _ := url.ParseQuery(c.Query)
			fmt.Fprintf(&b, "?%s", q.Encode())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The sticky comment: created on the first run, edited in place on the next,
// found on page 2 of the PR's comments; another job gets its own.
func TestCommentSticky(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	g.seedComments(7, 150) // the PR already has a page and a half of discussion
	r := request(g, 3)

	o, err := Comment(context.Background(), r)
	assertNoToken(t, o, err)
	if err != nil {
		t.Fatal(err)
	}
	want := "GET /repos/o/r/issues/7/comments?per_page=100\n" +
		"GET /repos/o/r/issues/7/comments?page=2&per_page=100\n" +
		"POST /repos/o/r/issues/7/comments\n"
	if got := callList(g.calls()); got != want {
		t.Fatalf("first run calls:\n%swant:\n%s", got, want)
	}
	cs := g.prComments(7)
	if len(cs) != 151 || cs[150].Body != CommentBody(r) {
		t.Fatalf("after the first run: %d comments, last %q", len(cs), cs[len(cs)-1].Body)
	}
	id := cs[150].ID
	if o.Comment != fmt.Sprintf("https://github.com/o/r/pull/7#issuecomment-%d", id) {
		t.Errorf("Outcome.Comment = %q", o.Comment)
	}

	// Second run of the same workflow/job: the marker is on page 2; edit it.
	r.Title, r.Summary = "sgpu-queue: 0 failed of 80", "## ✓ sgpu-queue: passed\n"
	o, err = Comment(context.Background(), r)
	assertNoToken(t, o, err)
	if err != nil {
		t.Fatal(err)
	}
	calls := g.calls()[3:]
	want = "GET /repos/o/r/issues/7/comments?per_page=100\n" +
		"GET /repos/o/r/issues/7/comments?page=2&per_page=100\n" +
		fmt.Sprintf("PATCH /repos/o/r/issues/comments/%d\n", id)
	if got := callList(calls); got != want {
		t.Fatalf("second run calls:\n%swant:\n%s", got, want)
	}
	if calls[2].Body["body"] != CommentBody(r) {
		t.Errorf("edit body = %v", calls[2].Body["body"])
	}
	cs = g.prComments(7)
	if len(cs) != 151 || cs[150].Body != CommentBody(r) || !strings.Contains(cs[150].Body, "passed") {
		t.Fatalf("after the second run: %d comments, last %q", len(cs), cs[len(cs)-1].Body)
	}

	// Another job of the workflow keeps its own comment, and so does each matrix
	// leg of one job (one check name each).
	r.Job = "queue-mi300"
	if _, err := Comment(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if cs = g.prComments(7); len(cs) != 152 || !strings.HasPrefix(cs[151].Body, "<!-- sgpu-queue:rocm-ci/sgpu-queue (queue-mi300) -->") {
		t.Fatalf("other job: %d comments", len(cs))
	}
	for i, leg := range []string{"sgpu-queue (build_and_test, linux-mi325-8)", "sgpu-queue (build_and_test, linux-mi355-8)", "sgpu-queue (build_and_test, linux-mi325-8)"} {
		r.Name = leg
		if _, err := Comment(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		want := 153 + min(i, 1)
		if cs = g.prComments(7); len(cs) != want || !strings.HasPrefix(cs[len(cs)-1].Body, "<!-- sgpu-queue:rocm-ci/sgpu-queue (build_and_test, linux-mi3") {
			t.Fatalf("leg %d: %d comments, want %d", i, len(cs), want)
		}
	}
}

// A comment that only quotes the marker is not the sticky one.
func TestCommentIgnoresQuotedMarker(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 0)
	g.mu.Lock()
	g.comments[7] = []*fakeComment{{ID: 1, User: "reviewer", Body: "> " + Marker(r.Workflow, r.Job) + "\n> old report\nwhy did this fail?"}}
	g.mu.Unlock()
	if _, err := Comment(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	cs := g.prComments(7)
	if len(cs) != 2 || !strings.HasPrefix(cs[0].Body, "> ") {
		t.Fatalf("comments %+v", cs)
	}
}

// A person's comment that starts with the marker (pasted from ours) is not the
// sticky one: the bot's own is edited, or, where there is none, one is created
// beside it; the person's comment is never changed. A user's token (not a bot)
// finds the comment it created beside the copy on the next run: one, not one a run.
func TestCommentOnlyOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		user   string // the token's user; "" is botUser
		others []*fakeComment
		want   int // comments on the PR after two runs
	}{
		{"planted only", "", nil, 2},
		{"planted before the bot's", "", []*fakeComment{{ID: 2, User: botUser, Body: "old"}}, 2},
		{"user token, planted only", "ci-user", nil, 2},
		{"user token, planted after its own", "ci-user", []*fakeComment{{ID: 2, User: "ci-user", Body: "old"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGitHub(t, testToken)
			g.user = tc.user
			r := request(g, 0)
			marker, _, _ := strings.Cut(CommentBody(r), "\n")
			planted := marker + "\nI pasted this"
			g.mu.Lock()
			g.comments[7] = []*fakeComment{{ID: 1, User: "reviewer", Body: planted}}
			for _, c := range tc.others {
				c.Body = marker + "\n" + c.Body
				g.comments[7] = append(g.comments[7], c)
			}
			g.nextID = 10
			g.mu.Unlock()
			for run := 0; run < 2; run++ {
				o, err := Comment(context.Background(), r)
				if err != nil || len(o.Warnings) > 0 || o.Comment == "" {
					t.Fatalf("run %d: %+v, %v", run, o, err)
				}
			}
			cs := g.prComments(7)
			if len(cs) != tc.want || cs[0].Body != planted {
				t.Fatalf("comments %+v", cs)
			}
			for _, c := range cs[1:] {
				if c.User != g.tokenUser() || c.Body != CommentBody(r) {
					t.Errorf("comment %+v: want the bot's report", c)
				}
			}
		})
	}
}

// A read-only token (a fork's pull request) with a pasted copy of ours on the PR: the
// edit and the create are both refused, and the step says so once.
func TestCommentReadOnlyBesidePasted(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 0)
	marker, _, _ := strings.Cut(CommentBody(r), "\n")
	g.mu.Lock()
	g.comments[7] = []*fakeComment{{ID: 1, User: "reviewer", Body: marker + "\nI pasted this"}}
	g.mu.Unlock()
	g.failNext("create-comment", 403, readOnlyBody, nil)
	o, err := Comment(context.Background(), r)
	if err != nil || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "lacks `pull-requests: write`") || o.Comment != "" {
		t.Fatalf("outcome %+v, error %v: want one warning naming the permission", o, err)
	}
}

func TestCommentNotAPR(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 3)
	r.PR = 0
	o, err := Comment(context.Background(), r)
	assertNoToken(t, o, err)
	if err != nil || o.Comment != "" || len(o.Warnings) != 0 || len(o.Notes) != 1 || !strings.Contains(o.Notes[0], "not a pull request") {
		t.Fatalf("outcome %+v, err %v", o, err)
	}
	if n := len(g.calls()); n != 0 {
		t.Errorf("%d API calls for a non-PR run", n)
	}
}

func TestCommentAPIErrors(t *testing.T) {
	tests := []struct {
		name     string
		route    string
		status   int
		body     string
		wantErr  string
		wantWarn string
	}{
		{"fork read-only token on create", "create-comment", 403, readOnlyBody, "",
			"cannot publish the PR comment: the token lacks `pull-requests: write` (add it to the job's permissions; a pull request from a fork only gets a read-only token: publish from a workflow_run job, see the README)"},
		{"read-only on list", "list-comments", 403, readOnlyBody, "", "cannot publish the PR comment: the token lacks `pull-requests: write`"},
		{"server error on list", "list-comments", 500, `{"message":"Server Error"}`, "cannot publish the PR comment: GET ", ""},
		{"server error on create", "create-comment", 500, `{"message":"Server Error"}`, "500 Server Error", ""},
		{"bad gateway once", "create-comment", 502, `{"message":"Bad Gateway"}`, "", ""},
		{"PR not found", "list-comments", 404, `{"message":"Not Found"}`, "the token cannot see o/r (check GITHUB_REPOSITORY and the token's access) or pull request #7 does not exist", ""},
		{"garbage answer", "list-comments", 200, `<html>`, "cannot publish the PR comment", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGitHub(t, testToken)
			g.failNext(tc.route, tc.status, tc.body, nil)
			if tc.wantErr != "" && tc.status >= 500 {
				for i := 0; i < DefaultRetries; i++ { // a 5xx that persists through the retries
					g.failNext(tc.route, tc.status, tc.body, nil)
				}
			}
			o, err := Comment(context.Background(), request(g, 3))
			assertNoToken(t, o, err)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantWarn == "" && len(o.Warnings) != 0 {
				t.Errorf("warnings %q, want none", o.Warnings)
			}
			if tc.wantWarn != "" && (len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], tc.wantWarn)) {
				t.Errorf("warnings %q, want one containing %q", o.Warnings, tc.wantWarn)
			}
			if failed := tc.wantErr != "" || tc.wantWarn != ""; (o.Comment != "") == failed {
				t.Errorf("Outcome.Comment = %q (a failure: %v)", o.Comment, failed)
			}
		})
	}
}

func TestCommentBodyGolden(t *testing.T) {
	r := Request{
		SHA: testSHA, Workflow: "TransformerEngine CI", Job: "rocm-queue",
		Title:      "sgpu-queue: 2 failed of 80",
		Summary:    "## ✗ sgpu-queue: failed\n\n80 items on 8 GPUs, 2 failed · wall 41m 3s · utilisation 93.5 %\n\n### Failed items (2)\n\n| suite | item | rc | log |\n|---|---|---:|---|\n| torch | `tests/pytorch/test_fused_attn.py` | 1 | `test-results/logs/torch/items/007.log` |\n| jax | `tests/jax/test_layer.py` | 124 | `test-results/logs/jax/items/001.log` |\n\n",
		DetailsURL: "https://github.com/ROCm/TransformerEngine/actions/runs/13579246801",
	}
	goldenFile(t, "comment.golden.md", []byte(CommentBody(r)))
}

func TestCommentBodyTruncated(t *testing.T) {
	r := Request{Workflow: "w", Job: "j", Title: "t", SHA: testSHA, DetailsURL: "https://example.com/run",
		Summary: strings.Repeat("| ✗ | row |\n", 10000)}
	body := CommentBody(r)
	if len(body) > MaxTextBytes || !utf8.ValidString(body) {
		t.Fatalf("body of %d bytes, valid %v", len(body), utf8.ValidString(body))
	}
	if !strings.HasPrefix(body, Marker("w", "sgpu-queue (j)")+"\n") || !strings.Contains(body, "(truncated: the full report is report/schedule.md in the log dir)") ||
		!strings.HasSuffix(body, "updated in place on every run</sub>\n") {
		t.Errorf("body head %q … tail %q", body[:60], body[len(body)-200:])
	}
}

func TestMarker(t *testing.T) {
	tests := []struct{ workflow, job, want string }{
		{"rocm-ci", "queue", "<!-- sgpu-queue:rocm-ci/queue -->"},
		{"TransformerEngine CI", "rocm_queue", "<!-- sgpu-queue:TransformerEngine CI/rocm_queue -->"},
		{"a--b", "c", "<!-- sgpu-queue:a-%2Db/c -->"},
		{"x-->y", "z", "<!-- sgpu-queue:x-%2D%3Ey/z -->"},
		{"a/b", "c", "<!-- sgpu-queue:a%2Fb/c -->"},
		{"a", "b/c", "<!-- sgpu-queue:a/b%2Fc -->"},
		{"100%", "j", "<!-- sgpu-queue:100%25/j -->"},
		{"two\nlines", "j", "<!-- sgpu-queue:two%0Alines/j -->"},
		{"", "", "<!-- sgpu-queue:/ -->"},
	}
	for _, tc := range tests {
		if got := Marker(tc.workflow, tc.job); got != tc.want {
			t.Errorf("Marker(%q, %q) = %q, want %q", tc.workflow, tc.job, got, tc.want)
		}
	}
}

// FuzzMarker: any workflow/job name (user-chosen text) gives one line that is
// a single well-formed HTML comment, and different names give different
// markers.
func FuzzMarker(f *testing.F) {
	f.Add("rocm-ci", "queue", "rocm-ci/queue", "")
	f.Add("a--b", "c", "a-", "-b/c")
	f.Add("x-->y", "<!--", "%", "/")
	f.Fuzz(func(t *testing.T, w1, j1, w2, j2 string) {
		m := Marker(w1, j1)
		inner := strings.TrimSuffix(strings.TrimPrefix(m, "<!-- "), " -->")
		if !strings.HasPrefix(m, "<!-- sgpu-queue:") || strings.Contains(inner, "--") || strings.ContainsAny(inner, "<>\n\r") {
			t.Fatalf("marker %q is not one well-formed HTML comment", m)
		}
		if (w1 != w2 || j1 != j2) && utf8.ValidString(w1+j1+w2+j2) && m == Marker(w2, j2) {
			t.Fatalf("Marker(%q, %q) == Marker(%q, %q) = %q", w1, j1, w2, j2, m)
		}
	})
}

// TestCommentBodyClosesWhatItOpened: the comment's report, cut, closes its fence
// and <details> before the note and the footer.
func TestCommentBodyClosesWhatItOpened(t *testing.T) {
	r := Request{Workflow: "w", Job: "j", Title: "t", SHA: testSHA, DetailsURL: "https://example.com/run",
		Summary: "<details><summary>log</summary>\n\n```text\n" + strings.Repeat("𝛼β line\n", 9000) + "```\n\n</details>\n"}
	body := CommentBody(r)
	want := "\n```\n\n</details>\n\n\n… (truncated: the full report is report/schedule.md in the log dir)\n\n---\n<sub>sgpu-queue"
	if len(body) > MaxTextBytes || !utf8.ValidString(body) || !strings.Contains(body, want) {
		t.Errorf("body of %d bytes lacks %q; tail %q", len(body), want, body[max(0, len(body)-300):])
	}
}

// A green run with nothing changed comments nothing on a pull request that has no
// comment of its yet, but edits the one an earlier red run made: marked green.
func TestCommentEditOnly(t *testing.T) {
	g := newFakeGitHub(t, testToken)
	r := request(g, 0)
	r.CommentEditOnly, r.Comment = true, "## ✓ sgpu-queue: 1407 tests, none failed\n"
	o, err := Comment(context.Background(), r)
	if err != nil || len(g.prComments(7)) != 0 || len(o.Notes) != 1 || !strings.Contains(o.Notes[0], "no PR comment: nothing failed") {
		t.Fatalf("a green run made a comment (%d), notes %q, %v", len(g.prComments(7)), o.Notes, err)
	}
	red := request(g, 3)
	red.Comment = "## ✗ sgpu-queue: 1 of 1407 tests failed\n"
	if _, err := Comment(context.Background(), red); err != nil {
		t.Fatal(err)
	}
	if _, err := Comment(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	cs := g.prComments(7)
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "✓ sgpu-queue: 1407 tests, none failed") || strings.Contains(cs[0].Body, "✗") {
		t.Fatalf("comments %+v", cs)
	}
	if strings.Contains(cs[0].Body, "**"+r.Title+"**") {
		t.Errorf("the title repeats the comment's own headline:\n%s", cs[0].Body)
	}
}
