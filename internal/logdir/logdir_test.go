package logdir

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

func TestSafeTag(t *testing.T) {
	tests := []struct {
		tag  string
		want string // exact, or prefix+"~" when hashed
	}{
		{"", "whole"},
		{"test_numerics.ck.amax+triton", "test_numerics.ck.amax+triton"},
		{"mxfp4..ck", "mxfp4..ck"},
		{"a=b-c_d", "a=b-c_d"},
		{"a/b", "a_b~"},
		{"../../etc/passwd", ".._.._etc_passwd~"},
		{"with space", "with_space~"},
		{"tab\there", "tab_here~"},
		{"nl\nx", "nl_x~"},
		{"a_b~0000", "a_b_0000~"},
		{"whole", "whole~"}, // the opaque item's name is never a tag's
		{"ü", "__~"},
	}
	for _, tt := range tests {
		got := SafeTag(tt.tag)
		if strings.HasSuffix(tt.want, "~") {
			if !strings.HasPrefix(got, tt.want) || len(got) != len(tt.want)+hashLen {
				t.Errorf("SafeTag(%q) = %q, want %s<hash>", tt.tag, got, tt.want)
			}
		} else if got != tt.want {
			t.Errorf("SafeTag(%q) = %q, want %q", tt.tag, got, tt.want)
		}
	}
	if SafeTag("a/b") == SafeTag("a b") || SafeTag("a/b") == SafeTag("a_b") {
		t.Error("two tags share a file name")
	}
	if long := SafeTag(strings.Repeat("x", 500)); len(long) != MaxSafeTag {
		t.Errorf("long tag gives %d bytes", len(long))
	}
}

// Whatever the tag, the item's files stay directly inside items/ and cwd/.
func FuzzSafeTagStaysInside(f *testing.F) {
	for _, s := range []string{"a", "../x", "a/../../b", "..", "/", "\x00", "a\nb"} {
		f.Add(s)
	}
	l := Layout{Root: "/logs"}
	f.Fuzz(func(t *testing.T, tag string) {
		for _, p := range []string{l.ItemLog("torch", tag), l.ItemCwd("torch", tag)} {
			dir := filepath.Dir(p)
			if dir != "/logs/items" && dir != "/logs/cwd" {
				t.Fatalf("tag %q → %s outside items/ and cwd/", tag, p)
			}
		}
		s := SafeTag(tag)
		if s == "" || strings.ContainsAny(s, "/\\\x00") || !utf8.ValidString(s) {
			t.Fatalf("SafeTag(%q) = %q", tag, s)
		}
	})
}

func TestEscapeField(t *testing.T) {
	for _, s := range []string{"plain", "a\tb", "a\\tb", "x\ny\r", `\`, `a\\`, ""} {
		e := EscapeField(s)
		if strings.ContainsAny(e, "\t\n\r") {
			t.Errorf("EscapeField(%q) = %q keeps a separator", s, e)
		}
		if back := UnescapeField(e); back != s {
			t.Errorf("round trip %q → %q → %q", s, e, back)
		}
	}
}

// Attempts written by the AttemptsWriter come back from Load as they were; TE's
// timings.tsv beside them keeps its nine columns, written from each attempt.
func TestAttemptsRoundTrip(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	w, err := l.OpenAttempts()
	if err != nil {
		t.Fatal(err)
	}
	id := func(label, tag string) record.ItemID { return record.ItemID{Label: label, Tag: tag} }
	rows := []record.Attempt{
		{ItemID: id("torch", "test_a"), GPUs: []string{"0"}, Secs: 1.5, StartOff: 0, EndOff: 1.5, Estimate: 1.2, Known: true, Outcome: outcome.OK},
		{ItemID: id("torch", "tab\there"), GPUs: []string{"1"}, Secs: 260, RC: 139, StartOff: 3.25, EndOff: 263.25, Outcome: outcome.CutOff},
		{ItemID: id("core", ""), GPUs: []string{"2"}, Secs: 0.001, RC: 1, EndOff: 0.001, Estimate: 5, Known: true, Outcome: outcome.Failed},
		{ItemID: id("torch", "gated"), GPUs: []string{"0"}, Secs: 0.2, StartOff: 1.5, EndOff: 1.7, Estimate: 3, Known: true, Outcome: outcome.NoRun},
		// The same item again on the same GPU, later: a second attempt.
		{ItemID: id("torch", "test_a"), GPUs: []string{"0"}, Secs: 124, RC: 124, StartOff: 2, EndOff: 126, Estimate: 1.2, Known: true,
			Outcome: outcome.Timeout},
		// A multi-GPU item of a list suite whose tag is "whole", in shard 2 of a merge.
		{ItemID: id("dist", "whole"), GPUs: []string{"2", "3"}, Shard: 2, Secs: 7, StartOff: 4, EndOff: 11, Outcome: outcome.OK},
	}
	for _, r := range rows {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := l.WriteMeta(&record.Meta{Format: FormatAttempts}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(l.QueueTSV(), nil, 0o644)
	te := "torch\ttest_a\t0\t1.5\t0\t0\t1.5\t1.2\t0\n" +
		"torch\ttab\\there\t1\t260\t139\t3.25\t263.25\tunknown\t1\n" +
		"core\twhole\t2\t0.001\t1\t0\t0.001\t5\t0\n" +
		"torch\tgated\t0\t0.2\t0\t1.5\t1.7\t3\t1\n" +
		"torch\ttest_a\t0\t124\t124\t2\t126\t1.2\t1\n" +
		"dist\twhole\ts2:2,s2:3\t7\t0\t4\t11\tunknown\t0\n"
	if got := readFile(t, l.TimingsTSV()); got != te {
		t.Errorf("timings.tsv:\n%s\nwant TE's nine columns:\n%s", got, te)
	}
	run, warns, err := Load(l.Root)
	if err != nil || len(warns) != 0 || len(run.Attempts) != len(rows) {
		t.Fatalf("Load: %v, warnings %q, %d rows", err, warns, len(run.Attempts))
	}
	if diff := cmp.Diff(rows, run.Attempts); diff != "" {
		t.Errorf("attempts (-wrote +loaded):\n%s", diff)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseOutcomes(t *testing.T) {
	in := "torch\ta\t0\t1.5\tok\n" + // good
		"torch\tb\t0\n" + // torn
		"torch\tc\t0\t2\tpassed\n" + // unknown outcome
		"torch\td\t1\tx\tfailed\n" + // not a number
		"\n" +
		"torch\te\t1\t2.500\tno-run\n" + // good: start_off normalised
		"torch\tf\t1\t3\tok\textra\n" + // too wide
		"torch\ta\t0\t1.5\tcut-off\n" // a later row for the same attempt wins
	got, warns := parseOutcomes(strings.NewReader(in))
	want := map[attemptKey]outcome.Outcome{
		{"torch", "a", "0", "1.5"}: outcome.CutOff,
		{"torch", "e", "1", "2.5"}: outcome.NoRun,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(attemptKey{})); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	wantWarns := []string{"outcomes.tsv:2:", "outcomes.tsv:3:", "outcomes.tsv:4:", "outcomes.tsv:7:"}
	if len(warns) != len(wantWarns) {
		t.Fatalf("warnings %q", warns)
	}
	for i, w := range wantWarns {
		if !strings.HasPrefix(warns[i], w+" skipped row: ") {
			t.Errorf("warning %q, want %s", warns[i], w)
		}
	}
}

// A log dir of the layout before attempts.tsv loads: written before outcomes were
// recorded, by the legacy rule; one that records them in outcomes.tsv (format 2)
// with each row's, and a row whose outcome row was lost by the legacy rule, with a
// warning. Each attempt's outcome is decided as it loads.
func TestLoadLegacyAndLostOutcomes(t *testing.T) {
	rows := "torch\tok\t0\t1\t0\t0\t1\t1\t0\n" +
		"torch\tself124\t0\t2\t124\t1\t3\t1\t0\n" +
		"torch\tself137\t1\t2\t137\t0\t2\t1\t0\n" +
		"torch\tpartial\t1\t2\t0\t2\t4\t1\t1\n" +
		"torch\tfail\t0\t2\t3\t3\t5\t1\t0\n" +
		"torch\tcut\t1\t2\t143\t4\t6\t1\t1\n"
	for _, tt := range []struct {
		name      string
		meta      string
		outcomes  string
		want      []outcome.Outcome // recorded ("": none, the legacy rule decides it)
		wantWarns int
	}{
		{"legacy", `{"cancelled": false}`, "", make([]outcome.Outcome, 6), 0},
		{"legacy cancelled", `{"cancelled": true, "stalled": "every GPU is quarantined"}`, "", make([]outcome.Outcome, 6), 0},
		{"recorded, two lost", `{"format": 2}`,
			"torch\tok\t0\t0\tok\ntorch\tself124\t0\t1\tfailed\ntorch\tself137\t1\t0\tfailed\ntorch\tpartial\t1\t2\tno-run\n",
			[]outcome.Outcome{outcome.OK, outcome.Failed, outcome.Failed, outcome.NoRun, "", ""}, 2},
		// A legacy run.json ignores an outcomes file: its rows were not written
		// with one.
		{"legacy ignores outcomes", `{}`, "torch\tok\t0\t0\tno-run\n",
			[]outcome.Outcome{"", "", "", "", "", ""}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := Layout{Root: t.TempDir()}
			os.MkdirAll(l.QueueDir(), 0o755)
			os.WriteFile(l.Meta(), []byte(tt.meta), 0o644)
			os.WriteFile(l.QueueTSV(), nil, 0o644)
			os.WriteFile(l.TimingsTSV(), []byte(rows), 0o644)
			if tt.outcomes != "" {
				os.WriteFile(l.OutcomesTSV(), []byte(tt.outcomes), 0o644)
			}
			run, warns, err := Load(l.Root)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != tt.wantWarns {
				t.Errorf("warnings %q", warns)
			}
			for _, w := range warns {
				if !strings.Contains(w, "its row was torn or lost); taken from its rc: ") {
					t.Errorf("warning %q", w)
				}
			}
			if len(run.Attempts) != 6 {
				t.Fatalf("%d attempts", len(run.Attempts))
			}
			// rc 124 and 137 alone are TE's "killed from outside", never a timeout.
			legacy := []outcome.Outcome{outcome.OK, outcome.CutOff, outcome.CutOff, outcome.CutOff, outcome.Failed, outcome.CutOff}
			if strings.Contains(tt.meta, `"cancelled": true`) {
				legacy[5] = outcome.Cancelled
			}
			for i, r := range run.Attempts {
				want := tt.want[i]
				if want == "" {
					want = legacy[i]
				}
				if r.Outcome != want {
					t.Errorf("%s: outcome %s, want %s", r.Tag, r.Outcome, want)
				}
			}
			if strings.Contains(tt.meta, "stalled") {
				if st := run.Meta.Stop; st == nil || st.Reason != "" || st.Message != "every GPU is quarantined" {
					t.Errorf("legacy stop %+v", st)
				}
			}
		})
	}
}

// A run.json stop reason this version does not know loads as an early stop of
// unknown reason, with a warning, not as an error.
func TestLoadUnknownStopReason(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	os.MkdirAll(l.QueueDir(), 0o755)
	os.WriteFile(l.Meta(), []byte(`{"format": 2, "stop": {"reason": "meteor", "message": "a meteor", "phase": 4}}`), 0o644)
	os.WriteFile(l.QueueTSV(), nil, 0o644)
	run, warns, err := Load(l.Root)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], `stop reason "meteor" is not one of`) {
		t.Fatalf("err %v warnings %q", err, warns)
	}
	if run.Meta.Stop == nil || run.Meta.Stop.Reason != "" || run.Meta.Stop.Message != "a meteor" {
		t.Errorf("stop %+v", run.Meta.Stop)
	}
}

func TestParseTimingsBadRows(t *testing.T) {
	in := "torch\ta\t0\t1\t0\t0\t1\t1\t0\n" + // good
		"torch\tb\t0\n" + // missing columns (killed mid-write)
		"torch\tc\t0\tx\t0\n" + // not a number
		"torch\td\t1\t2\t1\n" + // torn after rc
		"\n" +
		"torch\te\t0\t-1\t0\t0\t1\t1\t0\n" + // negative
		"torch\tf\t1\t2\t0\t3.5\t5.5\t\t1\n" // good: no estimate, cut off
	got, warns := parseTimings(strings.NewReader(in), &record.Run{})
	if len(got) != 2 || got[1].Tag != "f" || got[1].EndOff != 5.5 || got[1].Known || !got[1].incomplete {
		t.Errorf("rows %+v", got)
	}
	if len(warns) != 4 || !strings.HasPrefix(warns[0], "timings.tsv:2:") || !strings.HasPrefix(warns[3], "timings.tsv:6:") {
		t.Errorf("warnings %q", warns)
	}
}

func TestParseAttemptsBadRows(t *testing.T) {
	in := "torch\ta\t0\t0\t1\t0\t0\t1\t1\tok\n" + // good
		"torch\tb\t0\t0\n" + // missing columns (killed mid-write)
		"torch\tc\t0\t0\tx\t0\t0\t1\t1\tok\n" + // not a number
		"torch\td\t0\t0\t1\t0\t0\t1\t1\tpassed\n" + // unknown outcome
		"\n" +
		"torch\te\t-1\t0\t1\t0\t0\t1\t1\tok\n" + // negative shard
		"torch\tf\t0\t\t1\t0\t0\t1\t1\tok\n" + // no GPU
		"\t\t0\t0\t1\t0\t0\t1\t1\tok\n" + // no label
		"torch\t\t2\t1,2\t2\t0\t3.5\t5.5\tunknown\tcut-off\n" // good: opaque, no estimate, shard 2's GPUs 1 and 2
	got, warns := ParseAttempts(strings.NewReader(in))
	want := []record.Attempt{
		{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Secs: 1, EndOff: 1, Estimate: 1, Known: true, Outcome: outcome.OK},
		{ItemID: record.ItemID{Label: "torch"}, GPUs: []string{"1", "2"}, Shard: 2, Secs: 2, StartOff: 3.5, EndOff: 5.5, Outcome: outcome.CutOff},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if len(warns) != 6 || !strings.HasPrefix(warns[0], "attempts.tsv:2: skipped row: ") || !strings.HasPrefix(warns[5], "attempts.tsv:8:") {
		t.Errorf("warnings %q", warns)
	}
}

// FuzzParseAttempts: whatever attempts.tsv holds, only well-formed rows are
// accepted, and each comes back from its own formatting.
func FuzzParseAttempts(f *testing.F) {
	f.Add("torch\ta\t0\t0\t1\t0\t0\t1\t1\tok\n")
	f.Add("a\tb\tc\n\t\t\t\t\n")
	f.Add("torch\ta b\\tc\t3\t0,1\t1\t124\t0\t1\tunknown\ttimeout\ntorch\t\t0\t2\t2\t0\t0\t2\t2\tno-run\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, _ := ParseAttempts(strings.NewReader(in))
		for _, r := range rows {
			if r.Secs < 0 || r.Secs != r.Secs || r.Label == "" || len(r.GPUs) == 0 || !r.Outcome.Valid() || r.Shard < 0 {
				t.Fatalf("accepted %+v", r)
			}
			back, warns := ParseAttempts(strings.NewReader(FormatAttempt(r)))
			if len(warns) != 0 || len(back) != 1 || back[0].ItemID != r.ItemID || back[0].RC != r.RC || back[0].Outcome != r.Outcome {
				t.Fatalf("round trip %+v → %+v %q", r, back, warns)
			}
		}
	})
}

func FuzzParseTimings(f *testing.F) {
	f.Add("torch\ta\t0\t1\t0\t0\t1\t1\t0\n")
	f.Add("a\tb\tc\n\t\t\t\t\n")
	// A tenth column (an outcome where TE's readers expect none) is not this format.
	f.Add("torch\ta\t0\t1\t0\t0\t1\t1\t0\tok\n")
	f.Add("torch\ta\t0\t1\t124\t0\t1\tunknown\t1\ttimeout\ntorch\tb\t1\t2\t0\t0\t2\t2\t1\n")
	f.Fuzz(func(t *testing.T, in string) {
		run := &record.Run{}
		rows, _ := parseTimings(strings.NewReader(in), run)
		for _, r := range rows {
			if r.Secs < 0 || r.Secs != r.Secs || r.Label == "" || r.Tag == "" {
				t.Fatalf("accepted %+v", r)
			}
			r.Outcome = outcome.Legacy(r.RC, r.incomplete, false)
			back, warns := parseTimings(strings.NewReader(FormatTiming(r.Attempt)), run)
			if len(warns) != 0 || len(back) != 1 || back[0].ItemID != r.ItemID || back[0].GPU() != r.GPU() || back[0].RC != r.RC {
				t.Fatalf("round trip %+v → %+v %q", r, back, warns)
			}
		}
	})
}

func TestQueueRoundTrip(t *testing.T) {
	rows := []record.QueueRow{
		{ItemID: record.ItemID{Label: "torch", Tag: "new"}, Weight: 999999, Cmd: "ci/pytorch.sh"},
		{ItemID: record.ItemID{Label: "core"}, Weight: 12.5, Cmd: "ci/core.sh", Args: []string{"-x", "y"}},
	}
	b := string(FormatQueue(rows))
	if b != "999999\ttorch\tci/pytorch.sh\tnew\t\n12.5\tcore\tci/core.sh\t\t-x y\n" {
		t.Errorf("queue.tsv = %q", b)
	}
	back, err := ParseQueue(strings.NewReader(b))
	if err != nil || len(back) != 2 || back[1].Tag != "" || strings.Join(back[1].Args, ",") != "-x,y" {
		t.Errorf("parse: %v %+v", err, back)
	}
}

// shortWriter fails its first write after writing part of it, like a disk that
// fills up mid-row, then works again.
type shortWriter struct {
	buf    strings.Builder
	failed bool
}

func (s *shortWriter) String() string { return s.buf.String() }

func (s *shortWriter) Write(p []byte) (int, error) {
	if !s.failed {
		s.failed = true
		s.buf.Write(p[:len(p)/2])
		return len(p) / 2, io.ErrShortWrite
	}
	return s.buf.Write(p)
}

func (s *shortWriter) Close() error { return nil }

// A row torn by a failed write costs that row only: the next one starts on its own
// line, in attempts.tsv and in timings.tsv alike.
func TestAttemptsWriterTornRow(t *testing.T) {
	for _, torn := range []string{"attempts", "timings"} {
		t.Run(torn, func(t *testing.T) {
			aw, tw := &shortWriter{}, &shortWriter{}
			if torn == "attempts" {
				tw.failed = true // works from the start
			} else {
				aw.failed = true
			}
			w := &AttemptsWriter{attempts: appender{w: aw}, timings: appender{w: tw}}
			a := record.Attempt{ItemID: record.ItemID{Label: "s", Tag: "a"}, GPUs: []string{"0"}, Secs: 1, EndOff: 1, Estimate: 1, Known: true,
				Outcome: outcome.OK}
			b := record.Attempt{ItemID: record.ItemID{Label: "s", Tag: "b"}, GPUs: []string{"1"}, Secs: 2, EndOff: 2, Estimate: 2, Known: true,
				Outcome: outcome.NoRun}
			if err := w.Append(a); err == nil || !strings.HasPrefix(err.Error(), torn+".tsv: ") {
				t.Fatalf("the short write was not reported: %v", err)
			}
			if err := w.Append(b); err != nil {
				t.Fatal(err)
			}
			rows, warns := ParseAttempts(strings.NewReader(aw.String()))
			te, twarns := parseTimings(strings.NewReader(tw.String()), &record.Run{})
			switch torn {
			case "attempts":
				if len(rows) != 1 || rows[0].Tag != "b" || len(warns) != 1 || len(te) != 2 || len(twarns) != 0 {
					t.Errorf("attempts %+v %q timings %+v %q", rows, warns, te, twarns)
				}
			case "timings":
				if len(rows) != 2 || len(warns) != 0 || len(te) != 1 || te[0].Tag != "b" || !te[0].incomplete || len(twarns) != 1 {
					t.Errorf("attempts %+v %q timings %+v %q", rows, warns, te, twarns)
				}
			}
		})
	}
}

// FuzzParseOutcomes: whatever outcomes.tsv holds, only well-formed rows with a
// known outcome are accepted, and each comes back from its own formatting.
func FuzzParseOutcomes(f *testing.F) {
	f.Add("torch\ta\t0\t1.5\tok\n")
	f.Add("torch\ta\t0\t1.5\tno-run\ntorch\tb\t1\t0\ttimeout\n")
	f.Add("torch\ta\t0\n\t\t\t\tcut-off\n")
	f.Add("x\\ty\tz\\n\t0\t1e3\tunavailable\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, _ := parseOutcomes(strings.NewReader(in))
		for k, o := range got {
			if !o.Valid() || k.label == "" || k.item == "" {
				t.Fatalf("accepted %+v %q", k, o)
			}
			if _, err := strconv.ParseFloat(k.startOff, 64); err != nil {
				t.Fatalf("start_off %q", k.startOff)
			}
			back, warns := parseOutcomes(strings.NewReader(joinFields(k.label, k.item, k.gpu, k.startOff, string(o))))
			if len(warns) != 0 || len(back) != 1 || back[k] != o {
				t.Fatalf("round trip %+v %q → %v %q", k, o, back, warns)
			}
		}
	})
}

// record.Attempt.Rounded is what attempts.tsv keeps of an attempt: one decided in
// memory and the same read back from the file must agree (verdicts, learned weights).
func TestRoundedIsWhatTheFileKeeps(t *testing.T) {
	for _, v := range []float64{0, 0.0004, 0.0005, 0.0015, 1.2345, 2.9995, 12.3456789, 1e6 + 0.0625, 86399.9999} {
		row := record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "a"}, GPUs: []string{"0"}, Secs: v, StartOff: v / 3, EndOff: v + v/3,
			Estimate: v * 2, Known: true, Outcome: outcome.OK}
		back, warns := ParseAttempts(strings.NewReader(FormatAttempt(row)))
		if len(warns) != 0 || len(back) != 1 {
			t.Fatalf("%v: %v %q", v, back, warns)
		}
		if diff := cmp.Diff(row.Rounded(), back[0]); diff != "" {
			t.Errorf("secs %v: (-Rounded says +the file keeps):\n%s", v, diff)
		}
	}
}
