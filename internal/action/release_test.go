package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rocm/sgpu-queue/internal/mdcheck"
)

// releaseCheck runs .github/release-check.sh in a copy of the repository's
// action.yml and CHANGELOG.md, each changed by edit; it returns the exit code and
// what the script printed.
func releaseCheck(t *testing.T, edit func(name, text string) string, stdin string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash: .github/release-check.sh is a bash script")
	}
	dir := t.TempDir()
	for _, name := range []string{"action.yml", "CHANGELOG.md"} {
		text := repoFile(t, name)
		if edit != nil {
			text = edit(name, text)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".github", "release-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RELEASE_ROOT="+dir)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// The release rules (docs/releases.md): a full version whose image action.yml names
// exactly, with a changelog entry; nothing else is released.
func TestReleaseCheck(t *testing.T) {
	image := func(to string) func(name, text string) string {
		return func(name, text string) string {
			if name != "action.yml" {
				return text
			}
			return imageRef.ReplaceAllString(text, "  image: "+to)
		}
	}
	cur := newestRelease(t) // the prepared release: the newest of CHANGELOG.md
	const other = "v9.9.9"
	noEntry := func(name, text string) string {
		if name != "CHANGELOG.md" {
			return text
		}
		return strings.Replace(text, "## "+cur, "## v0.0.9", 1)
	}
	cases := []struct {
		name string
		edit func(name, text string) string
		tag  string
		code int
		want string
	}{
		{"the prepared release", nil, cur, 0, "release " + cur + ": tag, action.yml (docker://ghcr.io/rocm/sgpu-queue:" + cur + ") and CHANGELOG.md entry agree"},
		{"a major tag", nil, "v1", 1, "::error::tag 'v1' is not a full version vX.Y.Z (v1, v1.2 and pre-releases such as v1.2.3-rc1 are not released)"},
		{"a minor tag", nil, "v1.0", 1, "::error::tag 'v1.0' is not a full version vX.Y.Z"},
		{"a pre-release", nil, "v1.0.0-rc1", 1, "::error::tag 'v1.0.0-rc1' is not a full version vX.Y.Z"},
		{"no tag", nil, "", 1, "::error::tag '' is not a full version"},
		{"a leading zero", nil, "v1.01.0", 1, "::error::tag 'v1.01.0' is not a full version"},
		{"another release's tag", nil, other, 1,
			"::error file=action.yml::action.yml runs.image is 'docker://ghcr.io/rocm/sgpu-queue:" + cur + "', but the release " + other +
				" must run 'docker://ghcr.io/rocm/sgpu-queue:" + other + "': set it in the release commit"},
		{"action.yml on the moving tag", image("docker://ghcr.io/rocm/sgpu-queue:v1"), cur, 1,
			"::error file=action.yml::action.yml runs.image is 'docker://ghcr.io/rocm/sgpu-queue:v1', but the release " + cur + " must run"},
		{"action.yml on another image", image("docker://ghcr.io/someone/else:" + cur), cur, 1, "runs.image is 'docker://ghcr.io/someone/else:" + cur + "'"},
		{"no changelog entry", noEntry, cur, 1,
			"::error file=CHANGELOG.md::CHANGELOG.md has no entry '## " + cur + "' (with what the release holds): add it in the release commit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := releaseCheck(t, c.edit, "", "check", c.tag)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("release-check.sh check %q: exit %d, %q; want exit %d, %q", c.tag, code, out, c.code, c.want)
			}
		})
	}
}

// The release notes are the changelog entry: its lines, not the next release's nor
// the one before.
func TestReleaseNotesAreTheChangelogEntry(t *testing.T) {
	cur := newestRelease(t)
	add := func(name, text string) string {
		if name != "CHANGELOG.md" {
			return text
		}
		return strings.Replace(text, "## "+cur, "## v9.9.9\n\n* A later change.\n\n## "+cur, 1)
	}
	entry := strings.SplitN(strings.SplitN(repoFile(t, "CHANGELOG.md"), "## "+cur+"\n", 2)[1], "\n## ", 2)[0]
	first := strings.SplitN(strings.TrimSpace(entry), "\n", 2)[0]
	code, out := releaseCheck(t, add, "", "notes", cur)
	if code != 0 || !strings.HasPrefix(out, first) || strings.Contains(out, "A later change") || strings.Contains(out, "##") ||
		strings.TrimSpace(out) != strings.TrimSpace(entry) {
		t.Errorf("notes %s: exit %d:\n%s", cur, code, out)
	}
	if code, out := releaseCheck(t, add, "", "notes", "v9.9.9"); code != 0 || strings.TrimSpace(out) != "* A later change." {
		t.Errorf("notes v9.9.9: exit %d: %q", code, out)
	}
	if code, out := releaseCheck(t, nil, "", "notes", "v1.0.0"); code != 0 || !strings.HasPrefix(out, "The first release.") {
		t.Errorf("notes v1.0.0: exit %d: %q", code, out)
	}
}

// The major tag moves to a release only when it is the newest of its major.
func TestReleaseMovesTheMajorTag(t *testing.T) {
	cases := []struct{ tag, tags, want string }{
		{"v1.0.0", "", "v1"},
		{"v1.0.0", "v1\nv1.0.0\n", "v1"},
		{"v1.2.0", "v1\nv1.0.0\nv1.1.3\nv1.2.0\n", "v1"},
		{"v1.10.0", "v1.9.0\nv1.2.0\n", "v1"},
		{"v1.0.1", "v1\nv1.0.0\nv1.1.0\n", ""},
		{"v1.9.1", "v1.10.0\n", ""},
		{"v2.0.0", "v1.5.0\nv1\n", "v2"},
		{"v1.5.1", "v2.0.0\nv1.5.0\nv2\n", "v1"},
		{"v1.5.1", "v1.5.1-rc1\nv1.5.0\n", "v1"},
	}
	for _, c := range cases {
		code, out := releaseCheck(t, nil, c.tags, "major", c.tag)
		if code != 0 || strings.TrimSpace(out) != c.want {
			t.Errorf("major %s with tags %q: exit %d, %q; want %q", c.tag, c.tags, code, out, c.want)
		}
	}
	if code, out := releaseCheck(t, nil, "", "major", "v1"); code != 1 || !strings.Contains(out, "not a full version") {
		t.Errorf("major v1: exit %d, %q", code, out)
	}
}

// newestRelease is the newest version CHANGELOG.md has a section of (## vX.Y.Z).
func newestRelease(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^## (v[0-9]+\.[0-9]+\.[0-9]+)\b`).FindStringSubmatch(repoFile(t, "CHANGELOG.md"))
	if m == nil {
		t.Fatal("CHANGELOG.md has no release section")
	}
	return m[1]
}

// releasedActionYML is action.yml as the newest release's commit has it: the first
// commit that set runs.image to that release's image (docs/releases.md: the release
// commit). A clone without that history skips, loudly.
func releasedActionYML(t *testing.T, version string) (commit, text string) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("GIT MISSING: the released action.yml is read from the history")
	}
	root := filepath.Join("..", "..")
	out, err := exec.Command(git, "-C", root, "log", "--reverse", "--format=%H", "-S", "ghcr.io/rocm/sgpu-queue:"+version, "--",
		"action.yml").Output()
	if err != nil {
		t.Skipf("NO GIT HISTORY (%v): the released action.yml cannot be read", err)
	}
	commit, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	if commit == "" {
		if shallow, _ := exec.Command(git, "-C", root, "rev-parse", "--is-shallow-repository").Output(); strings.TrimSpace(string(shallow)) == "true" {
			t.Skipf("SHALLOW CLONE: the release commit of %s is not in it (fetch the history: fetch-depth: 0)", version)
		}
		t.Fatalf("no commit sets action.yml's image to %s, the newest release of CHANGELOG.md: cut the release commit (docs/releases.md)", version)
	}
	data, err := exec.Command(git, "-C", root, "show", commit+":action.yml").Output()
	if err != nil {
		t.Fatalf("git show %s:action.yml: %v", commit, err)
	}
	return commit, string(data)
}

// Every input a workflow of README.md or docs/ gives rocm/sgpu-queue exists in the
// action.yml of the newest release: `uses: rocm/sgpu-queue@v1` runs that release, and
// a docs workflow must run as written (an input no release has is a warning there and
// does nothing). An issue that adds an input ends with a release commit.
func TestDocsUseReleasedInputs(t *testing.T) {
	version := newestRelease(t)
	commit, manifest := releasedActionYML(t, version)
	var released struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	if err := yaml.Unmarshal([]byte(manifest), &released); err != nil || len(released.Inputs) == 0 {
		t.Fatalf("action.yml of %s (%.12s): %v", version, commit, err)
	}
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append([]string{filepath.Join("..", "..", "README.md")}, pages...)
	used := 0
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range mdcheck.Workflows(string(data)) {
			wf, err := mdcheck.ParseWorkflow(s.YAML)
			if err != nil {
				t.Fatalf("%s:%d: %v", filepath.Base(p), s.Line, err)
			}
			for _, j := range wf.Jobs {
				for _, st := range j.Steps {
					if !strings.HasPrefix(st.Uses, "rocm/sgpu-queue@") {
						continue
					}
					for input := range st.With {
						used++
						if _, ok := released.Inputs[input]; !ok {
							t.Errorf("%s:%d: job %s gives input %s, which release %s (%.12s) does not have: cut a release (docs/releases.md)",
								filepath.Base(p), s.Line, j.ID, input, version, commit)
						}
					}
				}
			}
		}
	}
	if used < 20 {
		t.Errorf("only %d inputs found in the docs' workflows", used)
	}
}

// The README says how to install the CLI at the newest release.
func TestReadmeInstallsTheNewestRelease(t *testing.T) {
	want := "go install github.com/rocm/sgpu-queue@" + newestRelease(t)
	if !strings.Contains(repoFile(t, "README.md"), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
