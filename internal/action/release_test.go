package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	noEntry := func(name, text string) string {
		if name != "CHANGELOG.md" {
			return text
		}
		return strings.Replace(text, "## v1.0.0", "## v0.9.0", 1)
	}
	cases := []struct {
		name string
		edit func(name, text string) string
		tag  string
		code int
		want string
	}{
		{"the prepared v1.0.0", nil, "v1.0.0", 0, "release v1.0.0: tag, action.yml (docker://ghcr.io/rocm/sgpu-queue:v1.0.0) and CHANGELOG.md entry agree"},
		{"a major tag", nil, "v1", 1, "::error::tag 'v1' is not a full version vX.Y.Z (v1, v1.2 and pre-releases such as v1.2.3-rc1 are not released)"},
		{"a minor tag", nil, "v1.0", 1, "::error::tag 'v1.0' is not a full version vX.Y.Z"},
		{"a pre-release", nil, "v1.0.0-rc1", 1, "::error::tag 'v1.0.0-rc1' is not a full version vX.Y.Z"},
		{"no tag", nil, "", 1, "::error::tag '' is not a full version"},
		{"a leading zero", nil, "v1.01.0", 1, "::error::tag 'v1.01.0' is not a full version"},
		{"another release's tag", nil, "v1.0.1", 1,
			"::error file=action.yml::action.yml runs.image is 'docker://ghcr.io/rocm/sgpu-queue:v1.0.0', but the release v1.0.1 must run 'docker://ghcr.io/rocm/sgpu-queue:v1.0.1': set it in the release commit"},
		{"action.yml on the moving tag", image("docker://ghcr.io/rocm/sgpu-queue:v1"), "v1.0.0", 1,
			"::error file=action.yml::action.yml runs.image is 'docker://ghcr.io/rocm/sgpu-queue:v1', but the release v1.0.0 must run"},
		{"action.yml on another image", image("docker://ghcr.io/someone/else:v1.0.0"), "v1.0.0", 1, "runs.image is 'docker://ghcr.io/someone/else:v1.0.0'"},
		{"no changelog entry", noEntry, "v1.0.0", 1,
			"::error file=CHANGELOG.md::CHANGELOG.md has no entry '## v1.0.0' (with what the release holds): add it in the release commit"},
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

// The release notes are the changelog entry: its lines, not the next release's.
func TestReleaseNotesAreTheChangelogEntry(t *testing.T) {
	add := func(name, text string) string {
		if name != "CHANGELOG.md" {
			return text
		}
		return strings.Replace(text, "## v1.0.0", "## v1.1.0\n\n* A later change.\n\n## v1.0.0", 1)
	}
	code, out := releaseCheck(t, add, "", "notes", "v1.0.0")
	if code != 0 || !strings.HasPrefix(out, "The first release.") || strings.Contains(out, "A later change") || strings.Contains(out, "##") {
		t.Errorf("notes: exit %d:\n%s", code, out)
	}
	if code, out := releaseCheck(t, add, "", "notes", "v1.1.0"); code != 0 || strings.TrimSpace(out) != "* A later change." {
		t.Errorf("notes v1.1.0: exit %d: %q", code, out)
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
