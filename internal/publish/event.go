package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxEvent bounds the event payload read; GitHub's are well under it.
const maxEvent = 32 << 20

// PRFromEvent reads the event payload at eventPath (GITHUB_EVENT_PATH) and
// returns the pull request's number and head sha for events that carry a
// pull_request object (pull_request, pull_request_target, and the PR review
// events). Other events (push, schedule, workflow_dispatch, …) give 0, "".
// An empty eventPath (not running under Actions) also gives 0, "".
func PRFromEvent(eventPath string) (number int, headSHA string, err error) {
	if eventPath == "" {
		return 0, "", nil
	}
	f, err := os.Open(eventPath)
	if err != nil {
		return 0, "", fmt.Errorf("event payload: %w; GITHUB_EVENT_PATH must name the runner's event file", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEvent+1))
	if err != nil {
		return 0, "", fmt.Errorf("event payload %s: %w", eventPath, err)
	}
	if len(data) > maxEvent {
		return 0, "", fmt.Errorf("event payload %s is over %d MiB; is GITHUB_EVENT_PATH the runner's event file?", eventPath, maxEvent>>20)
	}
	number, headSHA, err = parseEvent(data)
	if err != nil {
		return 0, "", fmt.Errorf("event payload %s: %w", eventPath, err)
	}
	return number, headSHA, nil
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
		return 0, "", fmt.Errorf("pull_request.head.sha %q is not a commit id", truncate(pr.Head.SHA, 80, "…"))
	}
	return pr.Number, pr.Head.SHA, nil
}
