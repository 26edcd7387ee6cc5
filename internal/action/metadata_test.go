package action

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
)

var update = flag.Bool("update", false, "rewrite .github/actions/dev/action.yml from action.yml")

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

// action.yml runs the image the release workflow publishes, by the major tag the
// workflow moves; the workflow builds both platforms and all three tags.
func TestReleaseWorkflowPublishesTheImageActionYMLRuns(t *testing.T) {
	m := imageRef.FindStringSubmatch(repoFile(t, "action.yml"))
	if m == nil {
		t.Fatal("action.yml: no runs.image")
	}
	ref := regexp.MustCompile(`^docker://([a-z0-9./-]+):v([0-9]+)$`).FindStringSubmatch(m[1])
	if ref == nil {
		t.Fatalf("action.yml runs.image %q: want docker://<image>:v<major>", m[1])
	}
	rel := repoFile(t, ".github/workflows/release.yml")
	img := regexp.MustCompile(`(?m)^  IMAGE: (\S+)$`).FindStringSubmatch(rel)
	if img == nil || img[1] != ref[1] {
		t.Errorf("release.yml publishes %v, action.yml runs %s", img, ref[1])
	}
	for _, want := range []string{
		"tags: [\"v*\"]",
		"platforms: linux/amd64,linux/arm64",
		"type=semver,pattern=v{{version}}",
		"type=semver,pattern=v{{major}}.{{minor}}",
		"type=semver,pattern=v{{major}}",
		"images: ${{ env.IMAGE }}",
		"packages: write",
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

// devAction is .github/actions/dev/action.yml as action.yml makes it: the same
// inputs and outputs, the image built from this checkout's Dockerfile (the runner
// resolves runs.image against the action's directory and builds with the
// Dockerfile's own directory as context).
func devAction(main string) string {
	s := strings.Replace(main, "name: sgpu-queue\n", "name: sgpu-queue (dev)\n", 1)
	s = regexp.MustCompile(`(?m)^description: >-\n(?:  .*\n)+`).ReplaceAllString(s,
		"description: >-\n  sgpu-queue built from this checkout's Dockerfile, for the project's own CI.\n")
	s = imageRef.ReplaceAllString(s, "  image: ../../../Dockerfile")
	return "# GENERATED from action.yml (go test ./internal/action -run TestDevAction -update): the\n" +
		"# same inputs and outputs, run from the image built from this checkout instead of\n" +
		"# the published one. The project's CI uses it; do not edit by hand.\n" + s
}

func TestDevActionMirrorsActionYML(t *testing.T) {
	golden.Check(t, filepath.Join("..", "..", ".github", "actions", "dev", "action.yml"), []byte(devAction(repoFile(t, "action.yml"))), *update)
	dev := repoFile(t, ".github/actions/dev/action.yml")
	if m := imageRef.FindStringSubmatch(dev); m == nil || m[1] != "../../../Dockerfile" {
		t.Errorf("dev action image %v", m)
	}
	in, out := actionYML(t)
	devIn, devOut := yamlNames(t, filepath.Join("..", "..", ".github", "actions", "dev", "action.yml"))
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
