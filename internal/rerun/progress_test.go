package rerun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The test a process died in is the one that started and never reached an end;
// tests that ended (a call of any outcome, a setup that failed or skipped) are not,
// nor are those it never reached.
func TestProgressUnfinished(t *testing.T) {
	for _, c := range []struct {
		name       string
		data       string
		unfinished []string
		collected  int
	}{
		{"died in its third test", `{"e":"collected","nodeids":["t.py::a","t.py::b","t.py::c","t.py::d"]}
{"e":"start","nodeid":"t.py::a"}
{"e":"report","nodeid":"t.py::a","when":"setup","outcome":"passed"}
{"e":"report","nodeid":"t.py::a","when":"call","outcome":"passed"}
{"e":"report","nodeid":"t.py::a","when":"teardown","outcome":"passed"}
{"e":"start","nodeid":"t.py::b"}
{"e":"report","nodeid":"t.py::b","when":"setup","outcome":"failed","msg":"fixture x"}
{"e":"start","nodeid":"t.py::c"}
{"e":"report","nodeid":"t.py::c","when":"setup","outcome":"passed"}
`, []string{"t.py::c"}, 4},
		{"killed mid-line", `{"e":"collected","nodeids":["a","b"]}
{"e":"start","nodeid":"a"}
{"e":"report","nodeid":"a","when":"ca`, []string{"a"}, 2},
		{"a skipped setup ends it", `{"e":"start","nodeid":"a"}
{"e":"report","nodeid":"a","when":"setup","outcome":"skipped"}`, nil, 0},
		{"started twice, said once", `{"e":"start","nodeid":"a"}
{"e":"start","nodeid":"a"}`, []string{"a"}, 0},
		{"no start events (an older plugin): none named", `{"e":"collected","nodeids":["a","b"]}`, nil, 2},
		{"not NDJSON", "\x00\xff garbage", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := ParseProgress([]byte(c.data))
			if diff := cmp.Diff(c.unfinished, p.Unfinished()); diff != "" || len(p.Collected) != c.collected {
				t.Errorf("collected %d, want %d; unfinished: %s", len(p.Collected), c.collected, diff)
			}
		})
	}
	p := ParseProgress([]byte(`{"e":"report","nodeid":"b","when":"setup","outcome":"failed","msg":"fixture x"}`))
	if p.Phases["b"].Message != "fixture x" || !p.Phases["b"].Ended() {
		t.Errorf("phases %+v", p.Phases["b"])
	}
}
