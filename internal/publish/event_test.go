package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPRFromEvent(t *testing.T) {
	tests := []struct {
		file    string
		number  int
		sha     string
		wantErr string
	}{
		{"pull_request_opened.json", 1234, "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01", ""},
		// A fork PR on pull_request_target: the head sha is the fork's commit.
		{"pull_request_target_fork_synchronize.json", 87, "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d", ""},
		{"push.json", 0, "", ""},
		{"workflow_dispatch.json", 0, "", ""},
		// A comment on a PR is an issue event without the head sha: not a PR run.
		{"issue_comment_on_pr.json", 0, "", ""},
		{"pull_request_no_head.json", 0, "", `pull_request.head.sha "" is not a commit id`},
		{"pull_request_bad_sha.json", 0, "", `pull_request.head.sha "refs/heads/sgpu-queue" is not a commit id`},
		{"pull_request_number_string.json", 0, "", "not an event payload"},
		{"malformed_truncated.json", 0, "", "not valid JSON"},
		{"empty.json", 0, "", "not valid JSON"},
		{"array.json", 0, "", "not an event payload"},
		{"missing.json", 0, "", "GITHUB_EVENT_PATH must name the runner's event file"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "events", tc.file)
			n, sha, err := PRFromEvent(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") || n != 0 || sha != "" {
					t.Errorf("error %q (one line?), number %d, sha %q", err, n, sha)
				}
				return
			}
			if err != nil || n != tc.number || sha != tc.sha {
				t.Fatalf("PRFromEvent = %d, %q, %v; want %d, %q", n, sha, err, tc.number, tc.sha)
			}
		})
	}
}

func TestPRFromEventNoPath(t *testing.T) {
	if n, sha, err := PRFromEvent(""); n != 0 || sha != "" || err != nil {
		t.Fatalf("PRFromEvent(\"\") = %d, %q, %v", n, sha, err)
	}
}

func TestPRFromEventTooBig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "event.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxEvent + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := PRFromEvent(path); err == nil || !strings.Contains(err.Error(), "is over 32 MiB") {
		t.Fatalf("error %v", err)
	}
}

// FuzzParseEvent: the event file is outside input; whatever it holds, parsing
// gives either an error or a positive PR number with a commit-id sha, or 0.
func FuzzParseEvent(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "events", "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"pull_request":null}`))
	f.Add([]byte(`{"pull_request":{"number":-1,"head":{"sha":"x"}}}`))
	f.Add([]byte(`{"pull_request":{"number":1e99}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, sha, err := parseEvent(data)
		switch {
		case err != nil:
			if n != 0 || sha != "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with %d, %q", err, n, sha)
			}
		case n == 0:
			if sha != "" {
				t.Fatalf("no PR but sha %q", sha)
			}
		case n < 0 || !hexSHA.MatchString(sha):
			t.Fatalf("PR %d with sha %q", n, sha)
		}
	})
}

// A workflow_run payload names the triggering run's commit and page; a fork's pull
// request is not listed (GitHub leaves pull_requests empty for forks), a
// same-repository one is.
func TestWorkflowRunFromEvent(t *testing.T) {
	tests := []struct {
		file string
		want WorkflowRun
		err  string
	}{
		{"workflow_run_fork.json", WorkflowRun{HeadSHA: "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d", HTMLURL: "https://github.com/ROCm/TransformerEngine/actions/runs/13579246802"}, ""},
		{"workflow_run_same_repo.json", WorkflowRun{HeadSHA: "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01", HTMLURL: "https://github.com/ROCm/TransformerEngine/actions/runs/13579246803", PR: 1234}, ""},
		{"pull_request_opened.json", WorkflowRun{}, ""},
		{"malformed_truncated.json", WorkflowRun{}, "not a workflow_run payload"},
		{"missing.json", WorkflowRun{}, "GITHUB_EVENT_PATH must name the runner's event file"},
	}
	for _, tc := range tests {
		got, err := WorkflowRunFromEvent(filepath.Join("testdata", "events", tc.file))
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %+v, %v; want %+v, %q", tc.file, got, err, tc.want, tc.err)
		}
	}
}
