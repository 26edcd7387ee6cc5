package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// run --shard and --plan refuse, in one line and before anything runs, what no
// shard job can run: a plan without a shard, a shard outside the plan's K, a file
// that is not a plan. merge refuses to start without shard log dirs.
func TestShardUsageErrors(t *testing.T) {
	dir := t.TempDir()
	demo, _ := filepath.Abs("../../testdata/demo")
	plan := filepath.Join(dir, "plan.json")
	code, _, errs := runCommand(t, nil, "plan", "--shards", "3", "--gpus", "2", "--weights", teTable, "--arch", "gfx950", "--level", "3", "--out", plan, teConf)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	notPlan := filepath.Join(dir, "weights as plan.json")
	if err := os.WriteFile(notPlan, []byte("core 1251\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []string {
		return append(append([]string{"run", "--repo-root", demo, "--log-dir", filepath.Join(dir, "logs")}, args...), "ci/sgpu.conf")
	}
	for _, tc := range []cmdCase{
		{name: "plan without shard", args: run("--plan", plan), code: 2, stderr: []string{"--plan " + plan + " without --shard: say which shard of the plan this job runs"}},
		{name: "shard past the plan's K", args: run("--shard", "2/4", "--plan", plan), code: 2, stderr: []string{"--shard 2/4: plan " + plan + " splits the items over 3 shards; give --shard I/3"}},
		{name: "not a plan", args: run("--shard", "1/3", "--plan", notPlan), code: 2, stderr: []string{"plan " + notPlan + ": not JSON"}},
		{name: "no plan file", args: run("--shard", "1/3", "--plan", filepath.Join(dir, "none.json")), code: 2, stderr: []string{"--plan: open"}},
		{name: "bad shard", args: run("--shard", "3/2"), code: 2, stderr: []string{`--shard "3/2": want I/K`}},
		{name: "merge nothing", args: []string{"merge"}, code: 2, stderr: []string{"no SHARD_LOGDIR given", "Usage: sgpu-queue merge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCommand(t, map[string]string{"SGPU_GPUS": "0,1"}, tc.args...)
			tc.check(t, code, out, errs)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "logs")); err == nil {
		t.Error("a refused run wrote its log dir")
	}
}
