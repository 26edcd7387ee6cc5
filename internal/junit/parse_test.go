package junit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Each real-format sample keeps its suites, cases, outputs and the counts its
// tool reported, in a file the relaxed junit-10.xsd accepts (the raw ctest, gotestsum
// and pytest-xunit1 files do not), test cases keeping their file, line and properties.
func TestSamples(t *testing.T) {
	type suiteWant struct {
		name                             string
		tests, failures, errors, skipped int
		time, timestamp, hostname        string
		props                            map[string]string
	}
	tests := []struct {
		file   string
		suites []suiteWant
		check  func(t *testing.T, s xmlSuites, text string)
	}{
		{
			file: "pytest-xunit2.xml",
			suites: []suiteWant{{name: "pytest", tests: 6, failures: 1, errors: 1, skipped: 2, time: "48.213",
				timestamp: "2024-06-03T14:07:12.481093+00:00", hostname: "smci355-ccs-aus-m02-17",
				props: map[string]string{"rocm_version": "6.3.1", "gpu_arch": "gfx942"}}},
			check: func(t *testing.T, s xmlSuites, text string) {
				_, c := findCase(s, "test_amax[triton-fp8e4m3-shape1]")
				if c == nil || c.Failure == nil || !strings.HasPrefix(c.Failure.Message, "AssertionError: Tensor-likes are not close!\n\nMismatched") ||
					!strings.Contains(c.Failure.Body, ">       torch.testing.assert_close(te_amax(x, dtype), ref)") {
					t.Errorf("failure not kept: %+v", c)
				}
				_, c = findCase(s, "test_amax[triton-fp8e5m2-shape1]")
				if c == nil || c.Error == nil || c.Error.Message != `failed on setup with "RuntimeError: HIP error: out of memory"` {
					t.Errorf("setup error not kept: %+v", c)
				}
				_, c = findCase(s, "test_block_scaling[ck-mxfp8]")
				if c == nil || c.Skipped == nil || c.Skipped.Message != "ROCm: MXFP8 block scaling requires gfx950" {
					t.Errorf("skip not kept: %+v", c)
				}
			},
		},
		{
			file: "pytest-xunit1.xml",
			suites: []suiteWant{{name: "pytest", tests: 4, failures: 1, skipped: 1, time: "7.902",
				timestamp: "2024-06-03T14:09:40.102311+00:00", hostname: "smci355-ccs-aus-m02-17"}},
			check: func(t *testing.T, s xmlSuites, text string) {
				_, c := findCase(s, "test_dot_product_attention[ck-fp16-base_2_1]")
				if c == nil || c.Failure == nil || !strings.Contains(string(c.SystemOut), "ck fmha fwd") || !strings.Contains(string(c.SystemErr), "head_dim 64 > 32") {
					t.Errorf("outputs not kept: %+v", c)
				}
				_, c = findCase(s, "test_dpa_sliding_window[ck-bf16-swa_1_0]")
				if c == nil || c.File != "tests/pytorch/fused_attn/test_fused_attn.py" || c.Line != "301" {
					t.Errorf("file/line not kept: %+v", c)
				}
				if c == nil || c.Props != nil {
					t.Errorf("a case without properties got some: %+v", c)
				}
				_, c2 := findCase(s, "test_dot_product_attention[ck-bf16-base_1_0]")
				if c2 == nil || c2.Props == nil || len(c2.Props.List) != 1 || c2.Props.List[0] != (xmlProperty{Name: "backend", Value: "CK"}) {
					t.Errorf("testcase properties not kept: %+v", c2)
				}
				if c == nil || c.Skipped == nil || c.Skipped.Type != "pytest.skip" || !strings.Contains(c.Skipped.Body, "test_fused_attn.py:305") {
					t.Errorf("skip type and body not kept: %+v", c)
				}
			},
		},
		{
			file:   "ctest.xml",
			suites: []suiteWant{{name: "Linux-hipcc", tests: 5, failures: 2, skipped: 1, time: "58.000", timestamp: "2024-06-03T14:10:02", hostname: "smci355-ccs-aus-m02-17"}},
			check: func(t *testing.T, s xmlSuites, text string) {
				_, c := findCase(s, "test_normalization")
				if c == nil || c.Failure == nil || c.Failure.Message != "SEGFAULT" || c.Time != "9.074" || !strings.Contains(string(c.SystemOut), "LayerNorm_bf16_2048x12288") {
					t.Errorf("ctest failure not kept: %+v", c)
				}
				if strings.Contains(text, `status="`) || strings.Contains(text, `disabled="`) {
					t.Error("ctest-only attributes leaked")
				}
			},
		},
		{
			file: "gotestsum.xml",
			suites: []suiteWant{
				{name: "github.com/rocm/hipkit/internal/badmain", tests: 1, failures: 1, time: "0.000", timestamp: "2024-06-03T14:11:09Z", props: map[string]string{"go.version": "go1.22.3 linux/amd64"}},
				{name: "github.com/rocm/hipkit/internal/alloc", tests: 5, failures: 1, skipped: 1, time: "2.103", timestamp: "2024-06-03T14:11:09Z", props: map[string]string{"go.version": "go1.22.3 linux/amd64"}},
				{name: "github.com/rocm/hipkit/internal/stream", tests: 2, failures: 1, time: "1.409", timestamp: "2024-06-03T14:11:10Z", props: map[string]string{"go.version": "go1.22.3 linux/amd64"}},
				{name: "github.com/rocm/hipkit/internal/version", time: "0.000", timestamp: "2024-06-03T14:11:10Z", props: map[string]string{"go.version": "go1.22.3 linux/amd64"}},
			},
			check: func(t *testing.T, s xmlSuites, text string) {
				_, c := findCase(s, "TestMain")
				if c == nil || c.Failure == nil || c.Failure.Body != "hip: no ROCm-capable device is detected\nFAIL\tgithub.com/rocm/hipkit/internal/badmain\t0.012s\n" {
					t.Errorf("package failure not kept: %+v", c)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"item.xml": readFixture(t, "samples/"+tc.file)}, time.Now())
			d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "item"}, GPU: "2", Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			data, back := encode(t, d)
			if len(back.Suites) != len(tc.suites) {
				t.Fatalf("%d suites, want %d:\n%s", len(back.Suites), len(tc.suites), data)
			}
			for i, w := range tc.suites {
				g := back.Suites[i]
				if g.Name != w.name || g.Tests != w.tests || g.Failures != w.failures || g.Errors != w.errors || g.Skipped != w.skipped ||
					g.Time != w.time || g.Timestamp != w.timestamp || g.Hostname != w.hostname {
					t.Errorf("suite %d = %q %d/%d/%d/%d time %q ts %q host %q, want %+v", i, g.Name, g.Tests, g.Failures, g.Errors, g.Skipped, g.Time, g.Timestamp, g.Hostname, w)
				}
				for k, v := range w.props {
					if got, _ := prop(&g, k); got != v {
						t.Errorf("suite %d property %s = %q, want %q", i, k, got, v)
					}
				}
				if v, _ := prop(&g, "sgpu.item"); v != "item" {
					t.Errorf("suite %d not attributed: %+v", i, g.Props)
				}
			}
			tc.check(t, back, string(data))
			validateXSD(t, data)
		})
	}
}

// Inputs that are not usable JUnit each become one error case naming the file
// and the reason; nothing expands, nothing is fetched, nothing panics.
func TestHostileInputs(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `<!ENTITY leak "LEAKED-FROM-SERVER">`)
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("LEAKED-FROM-DISK"), 0o644)

	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]><testsuite name="x"><testcase name="a"><failure message="&lol9;">&lol9;</failure></testcase></testsuite>`
	tests := []struct {
		name, content string
		lim           *limits
		want          string // in the error message
		parses        bool   // harmless after all: no error case
	}{
		{name: "empty", content: "", want: "empty file"},
		{name: "whitespace", content: " \n\t\n", want: "empty file"},
		{name: "comment only", content: "<?xml version=\"1.0\"?><!-- nothing -->", want: "no XML element"},
		{name: "truncated", content: readFixture(t, "samples/ctest.xml")[:400], want: "unexpected EOF"},
		{name: "not junit", content: "<html><body><p>502 Bad Gateway</p></body></html>", want: "no <testsuite> element (the root is <html>)"},
		{name: "binary", content: "\x7fELF\x02\x01\x01\x00\x00\x00", want: "XML syntax error"},
		{name: "raw control character", content: "<testsuite name=\"x\"><testcase name=\"a\"><system-out>\x1b[31mred\x01</system-out></testcase></testsuite>", want: "illegal character code U+001B"},
		{name: "mismatched tags", content: "<testsuite name=\"x\"><testcase name=\"a\"></testsuite></testcase>", want: "element <testcase> closed by </testsuite>"},
		{name: "billion laughs", content: laughs, want: "invalid character entity &lol9;"},
		{name: "external entity file", content: `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY xxe SYSTEM "file://` + secret + `">]><testsuite name="x"><testcase name="&xxe;"/></testsuite>`, want: "invalid character entity &xxe;"},
		{name: "external entity http", content: `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY xxe SYSTEM "` + srv.URL + `/e">]><testsuite name="x"><testcase name="a"><failure>&xxe;</failure></testcase></testsuite>`, want: "invalid character entity &xxe;"},
		{name: "parameter entity", content: `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY % p SYSTEM "` + srv.URL + `/p"> %p;]><testsuite name="x"><testcase name="&leak;"/></testsuite>`, want: "invalid character entity &leak;"},
		{name: "external DTD is not fetched", content: `<?xml version="1.0"?><!DOCTYPE testsuite SYSTEM "` + srv.URL + `/junit.dtd"><testsuite name="x"><testcase name="a"/></testsuite>`, parses: true},
		{name: "latin-1 declared", content: `<?xml version="1.0" encoding="ISO-8859-1"?><testsuite name="x"/>`, want: `encoding "ISO-8859-1" declared`},
		{name: "unmatched CDATA end in text", content: `<testsuite name="x"><testcase name="a"><system-out>]]&gt; &lt;![CDATA[</system-out></testcase></testsuite>`, parses: true},
		{name: "deep nesting", content: strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100), want: "nested deeper than 64"},
		{name: "too many nodes", content: "<testsuite name=\"x\">" + strings.Repeat(`<testcase name="a"/>`, 50) + "</testsuite>", lim: &limits{maxBytes: 1 << 20, maxDepth: 64, maxNodes: 40}, want: "more than 40 elements and attributes"},
		{name: "deep wrapper, no suite", content: strings.Repeat("<a>", 60) + strings.Repeat("x", 5000) + strings.Repeat("</a>", 60), want: "no <testsuite> element (the root is <a>)"},
		{name: "over the size cap", content: passXML, lim: &limits{maxBytes: 100, maxDepth: 64, maxNodes: 1 << 20}, want: "larger than the 100 bytes limit on one JUnit file; not read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"bad.xml": tc.content}, time.Now())
			lim := defaultLimits()
			if tc.lim != nil {
				lim = *tc.lim
			}
			d, err := merge(context.Background(), "s", os.DirFS(dir), "", itemsOf(verdict.Suite{Items: []verdict.Item{{ItemID: record.ItemID{Tag: "bad"}, Result: record.Result{RC: 1, Failed: true}, Finished: true, LogRel: "bad.log", Started: true}}}, Source{}), time.Time{}, lim)
			if err != nil {
				t.Fatal(err)
			}
			data, back := encode(t, d)
			text := string(data)
			if strings.Contains(text, "LEAKED") || strings.Contains(text, "lollollol") {
				t.Errorf("an entity was expanded:\n%s", text)
			}
			st := d.Stats()
			if tc.parses {
				if st.Malformed != 0 {
					t.Errorf("harmless input reported malformed:\n%s", text)
				}
			} else {
				_, c := findCase(back, "bad.xml")
				if st.Malformed != 1 || st.Files != 1 || c == nil || c.Error == nil {
					t.Fatalf("Stats %+v, output:\n%s", st, text)
				}
				msg := c.Error.Message
				if !strings.HasPrefix(msg, "malformed JUnit XML bad.xml: ") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "log: bad.log") {
					t.Errorf("message %q, want it to contain %q", msg, tc.want)
				}
			}
			validateXSD(t, data)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the parser fetched %d external resources", n)
	}
}

// A file over the real 64 MiB cap is never read (a sparse file: no disk cost).
func TestHugeFileNotRead(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "a.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := encode(t, d)
	if d.Stats().Malformed != 1 || !strings.Contains(string(data), "a.xml is 67108865 bytes, larger than the 64 MiB limit") {
		t.Errorf("%+v\n%s", d.Stats(), data)
	}
}
