package action

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/settings"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The Marketplace refuses an action whose description is 125 characters or more.
func TestDescriptionFitsTheMarketplace(t *testing.T) {
	m := regexp.MustCompile(`(?m)^description: >-\n((?:  .*\n)+)`).FindStringSubmatch(repoFile(t, "action.yml"))
	if m == nil {
		t.Fatal("action.yml: no folded description")
	}
	d := strings.Join(strings.Fields(m[1]), " ")
	if n := len([]rune(d)); n >= 125 || n == 0 {
		t.Errorf("description of %d characters, want 1 to 124: %q", n, d)
	}
}

// imageRef is action.yml's runs.image.
var imageRef = regexp.MustCompile(`(?m)^  image: (.*)$`)

// action.yml runs the exact image of the newest release in CHANGELOG.md, the image
// the release workflow publishes for that tag (docs/releases.md); the workflow starts
// on full versions only and builds both platforms.
func TestReleaseWorkflowPublishesTheImageActionYMLRuns(t *testing.T) {
	m := imageRef.FindStringSubmatch(repoFile(t, "action.yml"))
	if m == nil {
		t.Fatal("action.yml: no runs.image")
	}
	ref := regexp.MustCompile(`^docker://([a-z0-9./-]+):(v[0-9]+\.[0-9]+\.[0-9]+)$`).FindStringSubmatch(m[1])
	if ref == nil {
		t.Fatalf("action.yml runs.image %q: want docker://<image>:vX.Y.Z (one image per release)", m[1])
	}
	newest := regexp.MustCompile(`(?m)^## (v[0-9]+\.[0-9]+\.[0-9]+)\b`).FindStringSubmatch(repoFile(t, "CHANGELOG.md"))
	if newest == nil || newest[1] != ref[2] {
		t.Errorf("action.yml runs %s, the newest release in CHANGELOG.md is %v", ref[2], newest)
	}
	rel := repoFile(t, ".github/workflows/release.yml")
	img := regexp.MustCompile(`(?m)^  IMAGE: (\S+)$`).FindStringSubmatch(rel)
	if img == nil || img[1] != ref[1] {
		t.Errorf("release.yml publishes %v, action.yml runs %s", img, ref[1])
	}
	for _, want := range []string{
		`tags: ["v[0-9]+.[0-9]+.[0-9]+"]`,
		"platforms: linux/amd64,linux/arm64",
		"tags: ${{ env.IMAGE }}:${{ github.ref_name }}",
		`.github/release-check.sh check "$TAG"`,
		`.github/release-check.sh major "$TAG"`,
		`git push --force origin "refs/tags/$major"`,
		"packages: write",
		"contents: write",
		"THE GHCR PACKAGE MUST BE PUBLIC",
	} {
		if !strings.Contains(rel, want) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
}

// Both base images are pinned by a digest (64 hex digits, no placeholder), and
// every stage is built from one of them.
func TestBaseImagesPinnedByDigest(t *testing.T) {
	df := repoFile(t, "Dockerfile")
	pins := regexp.MustCompile(`(?m)^ARG (GO_IMAGE|RUNTIME_IMAGE)=(\S+)$`).FindAllStringSubmatch(df, -1)
	if len(pins) != 2 {
		t.Fatalf("want ARG GO_IMAGE=… and ARG RUNTIME_IMAGE=…, got %q", pins)
	}
	digest := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)
	for _, p := range pins {
		if !digest.MatchString(p[2]) {
			t.Errorf("%s=%s is not <image>:<tag>@sha256:<digest>", p[1], p[2])
		}
	}
	for _, from := range regexp.MustCompile(`(?m)^FROM (.*)$`).FindAllStringSubmatch(df, -1) {
		if !strings.Contains(from[1], "${GO_IMAGE}") && !strings.Contains(from[1], "${RUNTIME_IMAGE}") {
			t.Errorf("FROM %s is not one of the pinned bases", from[1])
		}
	}
}

// The committed action.yml (its inputs and outputs), the dev action and
// docs/action.md's tables are what go generate ./... writes from the tables of
// internal/settings and this package: a text edited in one copy only, or a knob added
// without regenerating, fails here with the command that fixes it.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{manifestFile, devManifest, docsPage} {
		if diff := golden.Diff(repoFile(t, name), string(files[name])); diff != "" {
			t.Errorf("%s is not what go generate writes: run go generate ./... and commit the result; the texts are in "+
				"internal/settings and internal/action (docs/contributing.md). The difference (-committed +generated):\n%s", name, diff)
		}
	}
	dev := repoFile(t, devManifest)
	if m := imageRef.FindStringSubmatch(dev); m == nil || m[1] != "../../../Dockerfile" {
		t.Errorf("dev action image %v", m)
	}
	in, out := actionYML(t)
	devIn, devOut := yamlNames(t, filepath.Join(root, filepath.FromSlash(devManifest)))
	if a, b := strings.Join(keys(in), " "), strings.Join(keys(devIn), " "); a != b {
		t.Errorf("inputs differ:\n action.yml %s\n dev        %s", a, b)
	}
	if a, b := strings.Join(keys(out), " "), strings.Join(keys(devOut), " "); a != b {
		t.Errorf("outputs differ:\n action.yml %s\n dev        %s", a, b)
	}
}

// The project's own workflows test the image built from HEAD, never the published
// one (which is what the last release built).
func TestCIUsesTheDevAction(t *testing.T) {
	ci := repoFile(t, ".github/workflows/ci.yml")
	if n := strings.Count(ci, "uses: ./.github/actions/dev"); n < 2 {
		t.Errorf("ci.yml uses the dev action %d times, want every self-test step", n)
	}
	if regexp.MustCompile(`(?m)uses: \./\s*$`).MatchString(ci) {
		t.Error("ci.yml uses ./ (the published image) in a self-test")
	}
}

// docTable returns the first-column names of the table under the heading
// "## <heading>" of docs/action.md, and the second column of each (the default, for
// inputs).
func docTable(t *testing.T, heading string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	in := false
	for _, l := range strings.Split(repoFile(t, "docs/action.md"), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
			in = l == "## "+heading
		case in && strings.HasPrefix(l, "| `"):
			cells := strings.Split(l, "|")
			second := ""
			if len(cells) > 3 {
				second = strings.TrimSpace(cells[2])
			}
			for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
				rows[name[1]] = second
			}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("docs/action.md: no table under ## %s", heading)
	}
	return rows
}

// The Inputs and Outputs tables of docs/action.md name exactly what action.yml
// declares, and an input's default written as one literal is action.yml's (where
// action.yml has one: an empty default is computed, and the page says how).
func TestDocTablesMatchActionYML(t *testing.T) {
	inputs, outputs := actionYML(t)
	defaults := map[string]string{}
	cur := ""
	for _, l := range strings.Split(repoFile(t, "action.yml"), "\n") {
		if m := regexp.MustCompile(`^  ([a-z0-9-]+):$`).FindStringSubmatch(l); m != nil {
			cur = m[1]
		}
		if v, ok := strings.CutPrefix(l, "    default: "); ok {
			defaults[cur] = strings.Trim(v, `"`)
		}
	}
	docIn, docOut := docTable(t, "Inputs"), docTable(t, "Outputs")
	for _, c := range []struct {
		what      string
		yml, docs map[string]bool
	}{{"input", inputs, keySet(docIn)}, {"output", outputs, keySet(docOut)}} {
		for n := range c.yml {
			if !c.docs[n] {
				t.Errorf("action.yml's %s %s is not in docs/action.md's table", c.what, n)
			}
		}
		for n := range c.docs {
			if !c.yml[n] {
				t.Errorf("docs/action.md's table names the %s %s, which action.yml does not declare", c.what, n)
			}
		}
	}
	literal := regexp.MustCompile("^`([^`]*)`$")
	for name, def := range docIn {
		if m := literal.FindStringSubmatch(def); m != nil && inputs[name] && defaults[name] != "" && m[1] != defaults[name] {
			t.Errorf("docs/action.md: input %s defaults to %q, action.yml to %q", name, m[1], defaults[name])
		}
	}
}

func keySet(m map[string]string) map[string]bool {
	s := map[string]bool{}
	for k := range m {
		s[k] = true
	}
	return s
}

// The project's GitHub workflow installs every Debian package .ci/run installs for the
// tests (xmllint, pytest, CMake), so the tests that need them run there too instead of
// skipping.
func TestCIInstallsWhatTheTestsNeed(t *testing.T) {
	run := repoFile(t, ".ci/run")
	var pkgs []string
	for _, m := range regexp.MustCompile(`(?:pkgs\+=\(|install -y -q )([a-z0-9][a-z0-9.+-]+)\)`).FindAllStringSubmatch(run, -1) {
		pkgs = append(pkgs, m[1])
	}
	if len(pkgs) < 3 {
		t.Fatalf(".ci/run installs %q: the pattern no longer reads it", pkgs)
	}
	install := regexp.MustCompile(`apt-get install -y -q ([^\n]*)`).FindStringSubmatch(repoFile(t, ".github/workflows/ci.yml"))
	if install == nil {
		t.Fatal("ci.yml: no apt-get install line")
	}
	for _, p := range pkgs {
		if !slices.Contains(strings.Fields(install[1]), p) {
			t.Errorf("ci.yml does not install %s, which .ci/run installs for the tests", p)
		}
	}
}

// copyRoot copies the files Generate reads into a temporary root, each changed by
// edit, and returns the root.
func copyRoot(t *testing.T, edit func(name, text string) string) string {
	t.Helper()
	root := t.TempDir()
	for _, name := range []string{manifestFile, docsPage} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(edit(name, repoFile(t, name))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A description edited by hand in action.yml or docs/action.md, or an input added
// there alone, is what the generator rewrites: the tables are the only source.
func TestGenerateRewritesHandEdits(t *testing.T) {
	want, err := Generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	edited := copyRoot(t, func(name, text string) string {
		if name == manifestFile {
			text = strings.Replace(text, "Test level, passed to the suites", "Test level, as TE passes it", 1)
			return strings.Replace(text, "  config:\n", "  extra:\n    description: \"hand-made\"\n  config:\n", 1)
		}
		return strings.Replace(text, "| test level, passed to the suites", "| the test level", 1)
	})
	if repoFile(t, manifestFile) == readFile(t, edited, manifestFile) {
		t.Fatal("the edit did not apply: the test no longer edits a generated text")
	}
	got, err := Generate(edited)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{manifestFile, devManifest, docsPage} {
		if diff := golden.Diff(string(want[name]), string(got[name])); diff != "" {
			t.Errorf("%s: the hand edit survived (-want +got):\n%s", name, diff)
		}
	}
}

// Without its places (action.yml's inputs: and outputs:, docs/action.md's markers)
// the generator writes nothing and says what is missing.
func TestGenerateNeedsItsPlaces(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{manifestFile, "\noutputs:\n", "\nresults:\n", "action.yml has no top-level outputs: line"},
		{docsPage, "<!-- inputs: ", "<!-- the inputs: ", "docs/action.md has no <!-- inputs: …-->, then <!-- end of inputs -->"},
		{docsPage, "<!-- end of outputs -->", "", "<!-- end of outputs -->: put the two markers where go generate writes the outputs table"},
	}
	for _, tt := range tests {
		root := copyRoot(t, func(name, text string) string {
			if name == tt.name {
				return strings.Replace(text, tt.old, tt.new, 1)
			}
			return text
		})
		if _, err := Generate(root); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s without %q: %v, want %q", tt.name, tt.old, err, tt.want)
		}
	}
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// action.yml, as a YAML reader (the runner) reads it, says each input's and output's
// description and default exactly as the tables do: the quoting loses nothing.
func TestActionYMLReadsAsTheTables(t *testing.T) {
	var m struct {
		Inputs map[string]struct {
			Description, Default string
		}
		Outputs map[string]struct{ Description string }
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, manifestFile)), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range Inputs() {
		got := m.Inputs[k.Name]
		if want := k.Describe(settings.ActionYML); got.Description != want || got.Default != k.Default {
			t.Errorf("input %s reads as %q (default %q), want %q (default %q)", k.Name, got.Description, got.Default, want, k.Default)
		}
	}
	for _, o := range Outputs {
		if got, want := m.Outputs[o.Name].Description, o.describe(settings.ActionYML); got != want {
			t.Errorf("output %s reads as %q, want %q", o.Name, got, want)
		}
	}
	if len(m.Inputs) != len(Inputs()) || len(m.Outputs) != len(Outputs) {
		t.Errorf("action.yml has %d inputs and %d outputs, the tables %d and %d", len(m.Inputs), len(m.Outputs), len(Inputs()), len(Outputs))
	}
}
