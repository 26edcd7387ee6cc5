package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// maxEvent bounds the event payload read; GitHub's are well under it.
const maxEvent = 32 << 20

// PRFromEvent returns the pull request's number and head sha from the event payload at eventPath
// (GITHUB_EVENT_PATH); 0, "" for events without a pull_request object or an empty eventPath.
func PRFromEvent(eventPath string) (number int, headSHA string, err error) {
	if eventPath == "" {
		return 0, "", nil
	}
	data, err := readEvent(eventPath)
	if err != nil {
		return 0, "", err
	}
	number, headSHA, err = parseEvent(data)
	if err != nil {
		return 0, "", fmt.Errorf("event payload %s: %w", eventPath, err)
	}
	return number, headSHA, nil
}

func readEvent(eventPath string) ([]byte, error) {
	f, err := os.Open(eventPath)
	if err != nil {
		return nil, fmt.Errorf("event payload: %w; GITHUB_EVENT_PATH must name the runner's event file", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEvent+1))
	if err != nil {
		return nil, fmt.Errorf("event payload %s: %w", eventPath, err)
	}
	if len(data) > maxEvent {
		return nil, fmt.Errorf("event payload %s is over %d MiB; is GITHUB_EVENT_PATH the runner's event file?", eventPath, maxEvent>>20)
	}
	return data, nil
}

// WorkflowRun is what a workflow_run event says of the run that triggered it.
type WorkflowRun struct {
	HeadSHA string // the commit it ran on
	HTMLURL string // its page, where its artifacts are
	PR      int    // its pull request; 0 for a fork's (GitHub leaves the list empty)
}

// WorkflowRunFromEvent reads a workflow_run event payload; another event gives the zero WorkflowRun.
func WorkflowRunFromEvent(eventPath string) (WorkflowRun, error) {
	var w WorkflowRun
	if eventPath == "" {
		return w, nil
	}
	data, err := readEvent(eventPath)
	if err != nil {
		return w, err
	}
	var ev struct {
		Run *struct {
			HeadSHA      string `json:"head_sha"`
			HTMLURL      string `json:"html_url"`
			PullRequests []struct {
				Number int `json:"number"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return w, fmt.Errorf("event payload %s: not a workflow_run payload: %w", eventPath, err)
	}
	if ev.Run == nil {
		return w, nil
	}
	if hexSHA.MatchString(ev.Run.HeadSHA) {
		w.HeadSHA = ev.Run.HeadSHA
	}
	if strings.HasPrefix(ev.Run.HTMLURL, "https://") || strings.HasPrefix(ev.Run.HTMLURL, "http://") {
		w.HTMLURL = ev.Run.HTMLURL
	}
	if len(ev.Run.PullRequests) == 1 && ev.Run.PullRequests[0].Number > 0 {
		w.PR = ev.Run.PullRequests[0].Number
	}
	return w, nil
}

func parseEvent(data []byte) (int, string, error) {
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return 0, "", fmt.Errorf("not valid JSON (offset %d): %w; is GITHUB_EVENT_PATH the runner's event file?", se.Offset, err)
		}
		return 0, "", fmt.Errorf("not an event payload: %w", err)
	}
	pr := ev.PullRequest
	if pr == nil {
		return 0, "", nil
	}
	if pr.Number <= 0 {
		return 0, "", fmt.Errorf("pull_request.number is missing or not positive (%d)", pr.Number)
	}
	if !hexSHA.MatchString(pr.Head.SHA) {
		return 0, "", fmt.Errorf("pull_request.head.sha %q is not a commit id", textfmt.Truncate(pr.Head.SHA, 80, "…"))
	}
	return pr.Number, pr.Head.SHA, nil
}
