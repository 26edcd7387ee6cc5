package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	githubactions "github.com/sethvargo/go-githubactions"
)

// A list input's globs are expanded, but a file whose own name holds glob
// characters is taken as written: "ci/[gpu].conf" names that file even where
// ci/g.conf, which the pattern would match, exists too; a pattern that matches
// nothing is still refused.
func TestPathsLiteralGlobCharacters(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"ci/[gpu].conf", "ci/g.conf", "ci/x.conf"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		input string
		want  []string
		err   string
	}{
		{"ci/[gpu].conf", []string{"ci/[gpu].conf"}, ""},
		{"ci/[x].conf, ci/x.conf", []string{"ci/x.conf"}, ""},
		{"ci/?.conf", []string{"ci/g.conf", "ci/x.conf"}, ""},
		{"ci/[q].conf", nil, `input config: "ci/[q].conf" matches nothing: hint`},
	} {
		env := map[string]string{"INPUT_CONFIG": tt.input}
		a := &act{ws: ws, e: Env{Getenv: func(k string) string { return env[k] }}}
		a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv))
		got, err := a.paths("config", "hint")
		var rel []string
		for _, p := range got {
			rel = append(rel, a.rel(p))
		}
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: %v %v, want error %q", tt.input, rel, err, tt.err)
			}
			continue
		}
		if err != nil || strings.Join(rel, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: %q %v, want %q", tt.input, rel, err, tt.want)
		}
	}
}
