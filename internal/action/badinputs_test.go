package action

import (
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
)

// Inputs level, gpus and port-base are checked with every other input, each
// named as the action names it (never --port-base): a step with several bad
// inputs hears of all of them in one run.
func TestLevelGPUsPortBaseWithTheRest(t *testing.T) {
	env := map[string]string{"GITHUB_WORKSPACE": t.TempDir()}
	for k, v := range map[string]string{"level": "../1", "gpus": "0", "port-base": "99999", "retries": "x", "config": "ci/x.conf"} {
		env["INPUT_"+strings.ToUpper(k)] = v
	}
	a := &act{e: Env{Getenv: func(k string) string { return env[k] }}}
	a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv))
	a.ws = env["GITHUB_WORKSPACE"]
	_, err := a.readInputs()
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		"input gpus 0: a count must be at least 1 (to use GPU 0 alone, write gpus: 0, with a trailing comma)",
		`input level "../1": want a test level such as 1, 2 or 3`,
		`input port-base "99999": want a port number from 1 to 65535, the first of the items' PET_MASTER_PORT ports (default 29600)`,
		`input retries "x": `,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q, want it to start %q", i+1, lines[i], w)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("an action user reads a flag:\n%v", err)
	}
}
