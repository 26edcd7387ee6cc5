package action

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/tests"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// envAct is an act whose environment is env, its log the returned builder.
func envAct(t *testing.T, env map[string]string) (*act, *strings.Builder) {
	t.Helper()
	log := &strings.Builder{}
	a := &act{e: Env{Getenv: func(k string) string { return env[k] }, Stdout: log}}
	a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv), githubactions.WithWriter(log))
	a.obs = &observer{gh: a.gh, out: log}
	return a, log
}

// One ::error per failed test at its place (a file the checkout has, else the
// suite's config line), titled with its id, escaped as workflow commands need;
// the suite's own only for the items no failed test stands for.
func TestErrorAnnotations(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "tests", "pytorch"), 0o755)
	os.WriteFile(filepath.Join(ws, "tests", "pytorch", "test_numerics.py"), nil, 0o644)
	a, log := envAct(t, map[string]string{})
	a.ws, a.root = ws, ws
	res := &engine.Result{
		LogDir:  filepath.Join(ws, "logs"),
		Configs: map[string]config.Suite{"torch": {Label: "torch", File: filepath.Join(ws, "ci", "sgpu.conf"), Line: 3}},
		Suites: []verdict.Suite{{Label: "torch", Failed: 2, RC: 139, Items: []verdict.Item{
			{ItemID: record.ItemID{Label: "torch", Tag: "test_numerics.ck"}, Result: record.Result{Failed: true, RC: 1},
				Finished: true, Started: true,
				LogRel: "items/torch.test_numerics.ck.log"},
			{ItemID: record.ItemID{Label: "torch", Tag: "test_gone.ck"}, Result: record.Result{Failed: true, RC: 139},
				Finished: true, Started: true, Note: "cut off",
				LogRel: "items/torch.test_gone.ck.log"},
		}}},
		Stats: report.Stats{Tests: tests.Result{Roots: []string{"/__w/TE/TE"}, Bad: []tests.Test{
			{Suite: "torch", TestRef: record.TestRef{Item: "torch/test_numerics.ck", ID: "tests/pytorch/test_numerics.py::test_x[1, 2]"}, Case: junit.Case{Result: junit.CaseFailed,
				Message: "AssertionError: x\nsecond", Body: "/__w/TE/TE/tests/pytorch/test_numerics.py:12: AssertionError"}},
			{Suite: "torch", TestRef: record.TestRef{Item: "torch/test_numerics.ck", ID: "tests/pytorch/test_elsewhere.py::t"}, Case: junit.Case{Result: junit.CaseErrored}},
		}}},
	}
	a.present(res)
	var errs []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.HasPrefix(l, "::error") {
			errs = append(errs, l)
		}
	}
	want := []string{
		"::error file=tests/pytorch/test_numerics.py,line=12,title=tests/pytorch/test_numerics.py%3A%3Atest_x[1%2C 2]::failed in " +
			"torch/test_numerics.ck (log logs/items/torch.test_numerics.ck.log)%0AAssertionError: x%0Asecond",
		"::error file=ci/sgpu.conf,line=3,title=tests/pytorch/test_elsewhere.py%3A%3At::errored in torch/test_numerics.ck (log " +
			"logs/items/torch.test_numerics.ck.log)",
		"::error file=ci/sgpu.conf,line=3,title=suite torch failed::2 of 2 items failed (rc=139); 1 of them by their failed tests, " +
			"annotated one by one%0Atest_gone.ck rc=139 logs/items/torch.test_gone.ck.log (cut off)",
	}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	out := map[string]string{}
	testOutputs(res, out)
	if out["failed-tests"] != `["tests/pytorch/test_numerics.py::test_x[1, 2]","tests/pytorch/test_elsewhere.py::t"]` ||
		!strings.HasPrefix(out["tests"], `{"total":0,`) || strings.Contains(out["tests"], `"base"`) {
		t.Errorf("outputs %v", out)
	}
}

// A push to dev saves its record under a key a pull request into dev finds by
// prefix: of its level first, else any level; another leg, or a pull request
// into another branch, finds none; the pull request saves nothing.
func TestBaseStore(t *testing.T) {
	srv := cachetest.New(t)
	env := func(extra ...string) map[string]string {
		m := map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "abc1234def"}
		for _, kv := range append(srv.Env(), extra...) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return m
	}
	res := &engine.Result{Stats: report.Stats{Tests: tests.Result{Known: true, Level: "3",
		Counts: record.TestCounts{Total: 5, Passed: 4, Failed: 1},
		Bad:    []tests.Test{{TestRef: record.TestRef{Item: "torch/x", ID: "t.py::a"}, Case: junit.Case{Result: junit.CaseFailed}}}}}}
	ctx := context.Background()

	push, log := envAct(t, env("GITHUB_REF=refs/heads/dev"))
	push.leg = "sgpu-queue (build_and_test, linux-mi355-8)"
	b := push.baseStore("3")
	if b.restore(ctx, push) != nil {
		t.Error("a push restored a base")
	}
	b.save(ctx, push, res, false)
	key := BaseKeyPrefix("sgpu-weights", push.leg, "dev") + "l3-42-1"
	if !strings.Contains(log.String(), "base: saved "+key) {
		t.Fatalf("not saved under %s:\n%s", key, log)
	}
	for _, c := range []struct {
		name, leg, base, level string
		found                  bool
	}{
		{"the same leg and level", push.leg, "dev", "3", true},
		{"another level: the newest of any", push.leg, "dev", "1", true},
		{"another leg", "sgpu-queue (build_and_test, linux-mi325-8)", "dev", "3", false},
		{"another base branch", push.leg, "release/v2", "3", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, log := envAct(t, env("GITHUB_REF=refs/pull/7/merge", "GITHUB_BASE_REF="+c.base))
			pr.leg = c.leg
			b := pr.baseStore(c.level)
			rec := b.restore(ctx, pr)
			if (rec != nil) != c.found {
				t.Fatalf("restored %+v, want found %v\n%s", rec, c.found, log)
			}
			if rec != nil && (rec.Key != key || rec.Ref != "dev" || rec.SHA != "abc1234def" || rec.Level != "3" || rec.Tests.Failed != 1 ||
				len(rec.Failed) != 1 || rec.Failed[0] != (record.TestRef{Item: "torch/x", ID: "t.py::a"})) {
				t.Errorf("record %+v", rec)
			}
			n := len(srv.Entries())
			b.save(ctx, pr, res, false)
			if len(srv.Entries()) != n {
				t.Error("a pull request saved a record")
			}
		})
	}
	// Not a branch: nothing to read or write; a re-run counted only part.
	if tag, _ := envAct(t, env("GITHUB_REF=refs/tags/v1")); tag.baseStore("3") != nil {
		t.Error("a tag's run has a base store")
	}
	again, _ := envAct(t, env("GITHUB_REF=refs/heads/dev", "GITHUB_RUN_ID=43"))
	again.leg = push.leg
	n := len(srv.Entries())
	again.baseStore("3").save(ctx, again, &engine.Result{Rerun: &record.Rerun{}, Stats: res.Stats}, false)
	again.baseStore("3").save(ctx, again, res, true)
	if len(srv.Entries()) != n {
		t.Error("a re-run or a shard saved a record")
	}
}

// A base record another run left in the cache is compared with only when it adds
// up: counts below zero or that do not sum, a run id that would start a workflow
// command on the console, too many failed ids; each is one warning naming the
// entry, and the report shows no change.
func TestBaseRecordChecked(t *testing.T) {
	good := `"format":1,"ref":"dev","sha":"abc","run_id":"41","level":"3"`
	for name, body := range map[string]string{
		"negative":     `{` + good + `,"tests":{"total":-5,"passed":-5}}`,
		"do not sum":   `{` + good + `,"tests":{"total":5,"passed":1}}`,
		"flaky":        `{` + good + `,"tests":{"total":1,"passed":1,"flaky":2}}`,
		"run id":       `{"format":1,"ref":"dev","run_id":"41\n::error::pwned","level":"3","tests":{"total":1,"passed":1}}`,
		"suite label":  `{` + good + `,"tests":{"total":1,"passed":1},"suites":{"a b\n::x":{"total":1,"passed":1}}}`,
		"suite counts": `{` + good + `,"tests":{"total":1,"passed":1},"suites":{"torch":{"total":1}}}`,
		"more failed":  `{` + good + `,"tests":{"total":1,"passed":1},"more_failed":-1}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := cachetest.New(t)
			env := map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_REF": "refs/pull/7/merge", "GITHUB_BASE_REF": "dev"}
			for _, kv := range srv.Env() {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			pr, log := envAct(t, env)
			pr.leg = "leg"
			key := BaseKeyPrefix("sgpu-weights", pr.leg, "dev") + "l3-41-1"
			srv.Put(key, "", []byte(body))
			if rec := pr.baseStore("3").restore(context.Background(), pr); rec != nil {
				t.Fatalf("restored %+v", rec)
			}
			out := log.String()
			if !strings.Contains(out, "::warning::base: cache entry "+key+" is not usable (") || strings.Contains(out, "\n::error") ||
				strings.Count(out, "\n") != 1 {
				t.Errorf("console:\n%s", out)
			}
		})
	}
}
