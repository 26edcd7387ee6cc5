// Package action is the GitHub container action's face (`sgpu-queue action`): it reads
// the step's inputs, runs the same engine as `sgpu-queue run`, and presents the result
// the GitHub way (docs/action.md). It holds no scheduling logic of its own.
package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/rocm/sgpu-queue/internal/cache"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dockerexec"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/settings"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Env is what the action sees of its process.
type Env struct {
	Getenv  func(string) string
	Environ []string
	Stdout  io.Writer
	Force   <-chan struct{} // closed on a second cancel signal
}

// rawJUnitDir is where items write JUnit files when the step sets no
// JUNITXML_PREFIX: TE's layout, where its report step looks (docs/choices.md).
const rawJUnitDir = "test-results"

// maxAnnotations is how many error (and warning) annotations GitHub shows per step.
const maxAnnotations = 10

// Run is the action's entry point; it returns the step's exit code.
func Run(ctx context.Context, e Env) int {
	gh := githubactions.New(githubactions.WithWriter(e.Stdout), githubactions.WithGetenv(e.Getenv))
	a := &act{gh: gh, e: e, obs: &observer{gh: gh, out: e.Stdout}}
	// Mask the token before anything else can print it.
	if tok := gh.GetInput("github-token"); tok != "" {
		gh.AddMask(tok)
	}
	a.ws = e.Getenv("GITHUB_WORKSPACE")
	if a.ws == "" {
		a.ws, _ = os.Getwd()
	}
	a.root = a.ws
	if r := gh.GetInput("repo-root"); r != "" {
		a.root = a.path(r)
	}

	step, err := a.readInputs()
	if err != nil {
		return a.stop(&exitcode.Error{Code: exitcode.Usage, Err: err})
	}
	return step(ctx)
}

// readInputs reads every input before anything runs and returns what the step
// does. Every bad input is said at once: one must not hide another.
func (a *act) readInputs() (func(context.Context) int, error) {
	gh := a.gh
	var errs []error
	targets, err := publishTargets(gh.GetInput("publish"))
	if err != nil {
		targets = map[string]bool{"summary": true}
		errs = append(errs, err)
	}
	a.targets = targets
	if a.leg, err = a.checkName(); err != nil {
		errs = append(errs, err)
	}
	if a.pub, err = a.publishInputs(); err != nil {
		errs = append(errs, err)
	}
	a.runPage = a.runURL()
	if from := strings.TrimSpace(gh.GetInput("report-from")); from != "" {
		return func(ctx context.Context) int { return a.publishFrom(ctx, a.path(from)) }, errors.Join(errs...)
	}
	mode, err := a.mode()
	if err == nil {
		err = a.checkModeInputs(mode)
	}
	errs = append(errs, err)
	step, err := a.modeStep(mode)
	return step, errors.Join(append(errs, err)...)
}

// modeStep reads the inputs of the step's mode and returns what it runs; an unknown
// mode reads the run settings too, so their errors are said with it.
func (a *act) modeStep(mode string) (func(context.Context) int, error) {
	switch mode {
	case modePlan:
		req, err := a.planRequest()
		return func(ctx context.Context) int { return a.planMode(ctx, req) }, err
	case modeMerge:
		dirs, err := a.shardDirs()
		opts, oerr := a.options(false)
		var merr error
		opts.AllowMixed, merr = a.allowMixed()
		return func(ctx context.Context) int { return a.mergeMode(ctx, dirs, opts) }, errors.Join(err, oerr, merr)
	}
	opts, err := a.options(mode == modeRun)
	return func(ctx context.Context) int {
		if opts.Target.Container == "" {
			a.noteJobContainer(ctx)
		}
		st := a.rerunStore()
		switch {
		case runAttempt(a.e.Getenv) < 2:
			// A new run runs everything: a list in a reused workspace is another
			// run's (docs/action.md#re-runs).
			opts.Full = true
		case !opts.Full:
			st.restore(ctx, a, a.root)
		}
		base := a.baseStore(a.level(opts))
		opts.Presentation.BaseTests = base.restore(ctx, a)
		res, err := engine.Run(ctx, opts)
		if res != nil {
			st.save(context.WithoutCancel(ctx), a, a.root)
			base.save(context.WithoutCancel(ctx), a, res, opts.Sharding.Shards > 0)
		}
		return a.finish(ctx, res, err)
	}, err
}

// level is the run's test level as runenv.Level will settle it; "" when invalid.
func (a *act) level(opts engine.Options) string {
	level, err := opts.Target.SettledLevel(opts.Face)
	if err != nil {
		return ""
	}
	return level
}

// noteJobContainer notes that the suites run in the action's own container: the
// runner joins the job network only for a job container or services, so an empty
// container input may be a forgotten one.
func (a *act) noteJobContainer(ctx context.Context) {
	cli, err := dockerexec.NewClient()
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	self := dockerexec.FindSelf(os.ReadFile, a.e.Getenv("HOSTNAME"))
	if network := dockerexec.JobNetwork(ctx, cli, self.ID); network != "" {
		a.gh.Noticef("input container is empty: the suites run in this action's own container, not in the job's container "+
			"(this step is on the job network %s, made for a job container or services); to run them in the job container, "+
			"set container to its id, job.container.id", network)
	}
}

// finish presents what the engine's Run or Merge returned and gives the exit code.
func (a *act) finish(ctx context.Context, res *engine.Result, err error) int {
	a.obs.close()
	if err != nil {
		return a.stop(err)
	}
	a.present(res)
	a.publishPR(ctx, res)
	a.obs.flushWarnings()
	if p := res.Internal; p != nil {
		// A worker panicked: what finished is presented above; res.ExitCode is 70.
		a.gh.Errorf("sgpu-queue: internal error: %s; please report it with the log", textfmt.OneLine(p.Error()))
	}
	return res.ExitCode
}

type act struct {
	gh      *githubactions.Action
	e       Env
	ws      string // the workspace: input paths are relative to it
	root    string // the repo root the config's commands are relative to
	obs     *observer
	cache   *cache.Store    // nil when the step has no cache service
	targets map[string]bool // where the report goes: summary, check, comment
	leg     string          // the check name: this job and matrix leg
	pub     pubInputs
	runPage string // the page of the run whose artifacts hold the log dir
	summed  bool   // the job summary has the report
}

// options maps the inputs onto the engine; a run needs the config input, a merge
// does not.
func (a *act) options(needConfig bool) (engine.Options, error) {
	// Said with the settings' errors below: every bad input at once.
	values, merr := a.values()
	configs, cerr := a.configs(needConfig && values["mgpu-config"] == "")
	cerr = errors.Join(merr, cerr)
	env := suiteEnv(a.e.Environ)
	opts := engine.Options{
		Face:          optname.Action,
		Configs:       config.Sources{Files: configs},
		Target:        runenv.Options{RepoRoot: a.root},
		CheckCommands: true,
		Presentation:  engine.Presentation{Out: a.e.Stdout, Observer: a.obs, RunURL: a.runPage},
		Weights:       weights.Options{Store: a.store},
	}
	if err := values.Apply(&opts, a.e.Force); err != nil || cerr != nil {
		return opts, errors.Join(cerr, settings.Prefixed(err, "input "))
	}
	// Every run has JUnit files to merge; TE's scripts need the suffix to write
	// <prefix><tag>.xml.
	if p, ok := env.Get(opts.Target.Hooks.JUnitPrefix); !ok || p == "" {
		env = env.With(opts.Target.Hooks.JUnitPrefix+"="+filepath.Join(a.root, rawJUnitDir)+"/", opts.Target.Hooks.JUnitSuffix+"=.xml")
	}
	opts.Target.Env = env
	return opts, nil
}

// values are the knobs' inputs (those named in only, or every knob), paths made
// workspace-relative; the error is mgpu-config's.
func (a *act) values(only ...string) (settings.Values, error) {
	values := settings.Values{}
	for _, k := range settings.Knobs {
		if v := a.gh.GetInput(k.Name); len(only) == 0 || slices.Contains(only, k.Name) {
			if k.Path && k.Kind != settings.Lines && v != "" {
				v = a.path(v)
			}
			values[k.Name] = v
		}
	}
	mgpu, err := a.paths("mgpu-config", "name the mGPU queue's config file(s) relative to the workspace")
	values["mgpu-config"] = strings.Join(mgpu, "\n")
	return values, err
}

// runnerCredentials are variables the runner gives an action but never a `run:` step:
// the cache's runtime token and the services it opens, and the OIDC token request.
var runnerCredentials = []string{
	"ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_URL",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
}

// suiteEnv is the step's environment without the inputs (INPUT_GITHUB-TOKEN) and the
// runner's credentials, which a test printing its environment would publish.
func suiteEnv(environ []string) hook.Env {
	env := make(hook.Env, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "INPUT_") && !slices.Contains(runnerCredentials, name) {
			env = append(env, kv)
		}
	}
	return env
}

// secrets are the credential values the action knows.
func (a *act) secrets() []string {
	var out []string
	for _, v := range []string{a.gh.GetInput("github-token"), a.e.Getenv("ACTIONS_RUNTIME_TOKEN"),
		a.e.Getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")} {
		if v = strings.TrimSpace(v); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}

// scrub replaces every credential value in text GitHub shows unmasked (summary,
// check run, PR comment): a test may be handed a token and print it.
func (a *act) scrub(text string) string {
	for _, s := range a.secrets() {
		text = strings.ReplaceAll(text, s, "***")
	}
	return text
}

// runURL is the run's page, where its artifacts are ("" outside Actions).
func (a *act) runURL() string {
	server, repo, id := a.e.Getenv("GITHUB_SERVER_URL"), a.e.Getenv("GITHUB_REPOSITORY"), a.e.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + id
}

// store keeps the weight table in the Actions cache when there is one, and in the
// local file too, so an artifact upload of ci-weights/ keeps working.
func (a *act) store(arch, level, path string) weights.Store {
	local := weights.File{Path: path}
	cfg, ok := a.cacheConfig(arch, level)
	if !ok {
		fmt.Fprintf(a.e.Stdout, "  no Actions cache service in this step's environment: weights stay in %s\n", a.rel(path))
		return local
	}
	cfg.Local = local
	cfg.Leg = CacheLeg(a.leg)
	a.cache = cache.New(cfg)
	return loggedCache{a.cache, a}
}

// cacheConfig is the step's Actions cache for keys of arch and level; false when the
// step's environment has no cache service.
func (a *act) cacheConfig(arch, level string) (cache.Config, bool) {
	cfg := cache.ConfigFromEnv(a.e.Getenv, a.gh.GetInput("cache-key-prefix"), arch, level)
	return cfg, cfg.Token != "" && (cfg.ResultsURL != "" || cfg.CacheURL != "")
}

// blobStore is the cache store of this run's blobs (re-run state, base records) of
// up to maxBytes, and its config with the prefix and attempt as keys use them; nil
// without a cache service or a run id.
func (a *act) blobStore(maxBytes int64) (*cache.Store, cache.Config) {
	cfg, ok := a.cacheConfig("", "")
	if !ok || cfg.RunID == "" {
		return nil, cfg
	}
	cfg.MaxBytes = maxBytes
	cfg.Prefix = cmp.Or(cfg.Prefix, cache.DefaultPrefix)
	cfg.RunAttempt = cmp.Or(cfg.RunAttempt, "1")
	return cache.New(cfg), cfg
}

// loggedCache says what the cache restore found.
type loggedCache struct {
	*cache.Store
	a *act
}

func (l loggedCache) Load(ctx context.Context) (*weights.Table, []string, error) {
	t, warns, err := l.Store.Load(ctx)
	out := l.a.e.Stdout
	// One line per outcome: a failed restore is said by its warning alone.
	switch l.Outcome() {
	case cache.Skipped:
		fmt.Fprintf(out, "  cache: restore skipped: ACTIONS_CACHE_MODE=%s does not let this job read the cache (the local table is used if "+
			"there is one)\n", l.Mode())
	case cache.Hit:
		fmt.Fprintf(out, "  cache hit: restored %s (%s)\n", l.MatchedKey(), l.Protocol())
	case cache.OtherLevel:
		fmt.Fprintf(out, "  cache: no entry for %s* yet; restored another level's table %s (%s): the keys it shares order this run (cache-hit "+
			"stays false)\n", l.RestorePrefix(), l.MatchedKey(), l.Protocol())
	case cache.Miss:
		fmt.Fprintf(out, "  cache miss for %s* and %s* (%s): the first run here is ordered without weights (or from the local table)\n",
			l.RestorePrefix(), l.ArchPrefix(), l.Protocol())
	}
	return t, warns, err
}

func (l loggedCache) Save(ctx context.Context, t *weights.Table) error {
	err := l.Store.Save(ctx, t)
	switch {
	case !l.CanSave():
		fmt.Fprintf(l.a.e.Stdout, "  cache: save skipped: ACTIONS_CACHE_MODE=%s does not let this job write the cache\n", l.Mode())
	case err == nil:
		fmt.Fprintf(l.a.e.Stdout, "  cache: saved %s\n", l.SavedKey())
	}
	return err
}

func (a *act) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.ws, p)
}

// rel is p relative to the workspace: this container's /github/workspace is
// another path on the runner.
func (a *act) rel(p string) string {
	if r, err := filepath.Rel(a.ws, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// stop reports a run that stopped before its items ran.
func (a *act) stop(err error) int {
	code := exitcode.Of(err, exitcode.Failed)
	msg := err.Error()
	a.gh.WithFieldsMap(map[string]string{"title": "sgpu-queue stopped before running the suites"}).Errorf("%s", msg)
	if a.targets["summary"] {
		a.summary(fmt.Sprintf("## ✗ sgpu-queue stopped before running the suites\n\n```\n%s\n```\n", msg))
	}
	out := map[string]string{"result": "failure", "exit-code": strconv.Itoa(code)}
	a.cacheOutputs(out) // a table restored before the stop was restored all the same
	a.outputs(out)
	return code
}
