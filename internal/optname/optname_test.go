package optname

import "testing"

func TestFaces(t *testing.T) {
	cases := []struct {
		f                Face
		name, given, set string
	}{
		{CLI, "--repo-root", "--repo-root ci", "--repo-root ci"},
		{Action, "input repo-root", "input repo-root ci", "repo-root: ci"},
		{Face(0), "--repo-root", "--repo-root ci", "--repo-root ci"},
	}
	for _, c := range cases {
		if got := c.f.Name("repo-root"); got != c.name {
			t.Errorf("%d: Name = %q, want %q", c.f, got, c.name)
		}
		if got := c.f.Given("repo-root", "ci"); got != c.given {
			t.Errorf("%d: Given = %q, want %q", c.f, got, c.given)
		}
		if got := c.f.Set("repo-root", "ci"); got != c.set {
			t.Errorf("%d: Set = %q, want %q", c.f, got, c.set)
		}
	}
}

func TestEnable(t *testing.T) {
	if got := CLI.Enable("log-dir-reuse"); got != "--log-dir-reuse" {
		t.Errorf("CLI.Enable = %q", got)
	}
	if got := Action.Enable("log-dir-reuse"); got != "log-dir-reuse: true" {
		t.Errorf("Action.Enable = %q", got)
	}
}
