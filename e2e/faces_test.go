package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Each face names the options as its user writes them: the action's log says input
// names (input gpus, gpus: 0,), the command line says flags, for the same mistakes.
func TestMessagesNameEachFacesOptions(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "demo")
	bin := "PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin"
	cases := []struct {
		name   string
		inputs map[string]string
		args   []string
		action string // in the action's log
		cli    string // in the CLI's stderr
		code   int
	}{
		{"repo root missing", map[string]string{"config": "ci/sgpu.conf", "repo-root": "nope"},
			[]string{"run", "--repo-root", "nope", "ci/sgpu.conf"},
			"input repo-root " + filepath.Join(dir, "nope") + ": not a directory", "--repo-root nope: not a directory", 2},
		{"a count of zero GPUs", map[string]string{"config": "ci/sgpu.conf", "gpus": "0"},
			[]string{"run", "--gpus", "0", "ci/sgpu.conf"},
			"input gpus 0: a count must be at least 1 (to use GPU 0 alone, write gpus: 0, with a trailing comma)",
			"--gpus 0: a count must be at least 1 (to use GPU 0 alone, write --gpus 0, with a trailing comma)", 2},
		{"a bad arch", map[string]string{"config": "ci/sgpu.conf", "arch": "gfx 942"},
			[]string{"run", "--arch", "gfx 942", "ci/sgpu.conf"},
			`input arch "gfx 942": an arch is a name such as gfx942`, `--arch "gfx 942": an arch is a name such as gfx942`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _, _ := runner(t, dir, c.inputs, bin)
			r := sgpu(t, dir, env, "action")
			if r.code != c.code || !strings.Contains(r.stdout, c.action) {
				t.Errorf("action: exit %d, want %d and %q in:\n%s", r.code, c.code, c.action, r.stdout)
			}
			for _, flag := range []string{"--repo-root", "--gpus", "--arch"} {
				if strings.Contains(r.stdout, flag) {
					t.Errorf("the action's log names the flag %s:\n%s", flag, r.stdout)
				}
			}
			cli := sgpu(t, dir, []string{bin}, c.args...)
			if cli.code != c.code || !strings.Contains(cli.stderr, c.cli) || strings.Contains(cli.stderr, "input ") {
				t.Errorf("cli: exit %d, want %d and %q in:\n%s", cli.code, c.code, c.cli, cli.stderr)
			}
		})
	}
	// The GPU line of a run that went on says where the pool came from, by face.
	env, _, _ := runner(t, dir, map[string]string{"config": "ci/sgpu.conf", "gpus": "2", "arch": "gfx942", "dry-run": "true"}, bin)
	if r := sgpu(t, dir, env, "action"); !strings.Contains(r.stdout, "2 GPUs [0 1] from input gpus") || !strings.Contains(r.stdout, "arch gfx942 from input arch") {
		t.Errorf("action GPU line:\n%s", r.stdout)
	}
	if r := sgpu(t, dir, []string{bin}, "run", "--dry-run", "--gpus", "2", "--arch", "gfx942", "ci/sgpu.conf"); !strings.Contains(r.stdout+r.stderr, "2 GPUs [0 1] from --gpus") {
		t.Errorf("cli GPU line:\n%s%s", r.stdout, r.stderr)
	}
}
