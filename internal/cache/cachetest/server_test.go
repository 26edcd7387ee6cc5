package cachetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// do sends one request and returns status and body.
func do(t *testing.T, method, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (s *Server) twirpCall(t *testing.T, method, token string, req any) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(req)
	hdr := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	code, out := do(t, http.MethodPost, s.ResultsURL()+"twirp/github.actions.results.api.v1.CacheService/"+method, hdr, string(body))
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s answered non-JSON %q", method, out)
	}
	return code, m
}

type kv = map[string]any

func TestTwirpAuthAndRouting(t *testing.T) {
	s := New(t)
	req := kv{"key": "k", "version": "v"}
	cases := []struct {
		name, method, token string
		wantCode            int
		wantTwirp           string
	}{
		{"no token", "GetCacheEntryDownloadURL", "", 401, "unauthenticated"},
		{"foreign token", "GetCacheEntryDownloadURL", NewToken(t, []byte("x"), RunnerClaims(time.Hour)), 401, "unauthenticated"},
		{"expired token", "GetCacheEntryDownloadURL", NewToken(t, s.Secret(), RunnerClaims(-time.Hour)), 401, "unauthenticated"},
		{"garbage token", "GetCacheEntryDownloadURL", "a.b.c", 401, "unauthenticated"},
		{"unknown method", "DeleteCacheEntry", s.Token(), 404, "bad_route"},
		{"good", "GetCacheEntryDownloadURL", s.Token(), 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, m := s.twirpCall(t, tc.method, tc.token, req)
			if code != tc.wantCode || (tc.wantTwirp != "" && m["code"] != tc.wantTwirp) {
				t.Fatalf("got %d %v, want %d %q", code, m, tc.wantCode, tc.wantTwirp)
			}
		})
	}
	code, _ := do(t, http.MethodGet, s.ResultsURL()+"twirp/github.actions.results.api.v1.CacheService/CreateCacheEntry", nil, "")
	if code != 404 {
		t.Fatalf("GET on a Twirp method: %d, want 404", code)
	}
}

// TestV2Upload walks the v2 protocol by hand: create, single PUT and block upload,
// finalize (size checked), duplicate refused, lookup by prefix, ranged download.
func TestV2Upload(t *testing.T) {
	s := New(t)
	tok := s.Token()
	code, m := s.twirpCall(t, "CreateCacheEntry", tok, kv{"key": "p-1", "version": "v"})
	if code != 200 || m["ok"] != true {
		t.Fatalf("create: %d %v", code, m)
	}
	up := m["signed_upload_url"].(string)
	if code, _ := do(t, http.MethodPut, up, nil, "hello"); code != 400 {
		t.Fatalf("Put Blob without x-ms-blob-type: %d, want 400", code)
	}
	if code, _ := do(t, http.MethodPut, strings.Replace(up, "sig=", "sig=x", 1), map[string]string{"x-ms-blob-type": "BlockBlob"}, "hello"); code != 403 {
		t.Fatalf("wrong signature: %d, want 403", code)
	}
	if code, _ := do(t, http.MethodPut, up, map[string]string{"x-ms-blob-type": "BlockBlob"}, "hello\n"); code != 201 {
		t.Fatalf("Put Blob: %d", code)
	}
	if code, m := s.twirpCall(t, "FinalizeCacheEntryUpload", tok, kv{"key": "p-1", "version": "v", "size_bytes": 5}); code != 400 || m["code"] != "invalid_argument" {
		t.Fatalf("finalize with a wrong size: %d %v", code, m)
	}
	if code, m := s.twirpCall(t, "FinalizeCacheEntryUpload", tok, kv{"key": "p-1", "version": "v", "size_bytes": "6"}); code != 200 || m["ok"] != true {
		t.Fatalf("finalize: %d %v", code, m)
	}
	if code, _ := do(t, http.MethodPut, up, map[string]string{"x-ms-blob-type": "BlockBlob"}, "again"); code != 403 {
		t.Fatalf("write after finalize: %d, want 403", code)
	}
	if code, m := s.twirpCall(t, "CreateCacheEntry", tok, kv{"key": "p-1", "version": "v"}); code != 409 || m["code"] != "already_exists" {
		t.Fatalf("duplicate: %d %v", code, m)
	}

	// Second entry by blocks, out of order in the list.
	_, m = s.twirpCall(t, "CreateCacheEntry", tok, kv{"key": "p-2", "version": "v"})
	up = m["signed_upload_url"].(string)
	id := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("block-%04d", n))) }
	for n, part := range []string{"AAA", "BBB"} {
		if code, _ := do(t, http.MethodPut, up+"&comp=block&blockid="+id(n), nil, part); code != 201 {
			t.Fatalf("stage block %d: %d", n, code)
		}
	}
	list := "<?xml version=\"1.0\" encoding=\"UTF-8\"?><BlockList><Latest>" + id(1) + "</Latest><Uncommitted>" + id(0) + "</Uncommitted></BlockList>"
	if code, _ := do(t, http.MethodPut, up+"&comp=blocklist", nil, "<BlockList><Latest>"+id(7)+"</Latest></BlockList>"); code != 400 {
		t.Fatalf("unknown block: %d, want 400", code)
	}
	if code, _ := do(t, http.MethodPut, up+"&comp=blocklist", nil, list); code != 201 {
		t.Fatalf("block list: %d", code)
	}
	if code, _ := s.twirpCall(t, "FinalizeCacheEntryUpload", tok, kv{"key": "p-2", "version": "v", "size_bytes": 6}); code != 200 {
		t.Fatalf("finalize: %d", code)
	}
	if e, ok := s.Lookup("p-2", "v"); !ok || string(e.Data) != "BBBAAA" {
		t.Fatalf("assembled %q", e.Data)
	}

	// Lookup: prefix → newest (p-2); other version → miss.
	_, m = s.twirpCall(t, "GetCacheEntryDownloadURL", tok, kv{"key": "p-", "restore_keys": []string{"p-"}, "version": "v"})
	if m["ok"] != true || m["matched_key"] != "p-2" {
		t.Fatalf("lookup: %v", m)
	}
	down := m["signed_download_url"].(string)
	if code, body := do(t, http.MethodGet, down, map[string]string{"x-ms-range": "bytes=2-"}, ""); code != 206 || body != "BAAA" {
		t.Fatalf("ranged GET: %d %q", code, body)
	}
	if code, body := do(t, http.MethodGet, down, nil, ""); code != 200 || body != "BBBAAA" {
		t.Fatalf("GET: %d %q", code, body)
	}
	if code, _ := do(t, http.MethodGet, down, map[string]string{"Range": "bytes=9-"}, ""); code != 416 {
		t.Fatalf("range past the end: %d, want 416", code)
	}
	_, m = s.twirpCall(t, "GetCacheEntryDownloadURL", tok, kv{"key": "p-", "version": "other"})
	if m["ok"] != false {
		t.Fatalf("other version matched: %v", m)
	}
}

func TestMatchOrder(t *testing.T) {
	s := New(t)
	s.Put("a-1", "v", []byte("1"))
	s.Put("a-2", "v", []byte("2"))
	s.Put("a", "v", []byte("exact"))
	s.Put("b-1", "v", []byte("b"))
	s.Put("a-3", "w", []byte("other version"))
	cases := []struct {
		key         string
		restoreKeys []string
		want        string
	}{
		{"a", nil, "a"},                         // exact beats newer prefix matches
		{"a-", nil, "a-2"},                      // prefix: newest
		{"zzz", []string{"b-", "a-"}, "b-1"},    // restore keys in order
		{"zzz", []string{"nope", "a-1"}, "a-1"}, // exact restore key
		{"zzz", []string{"nope"}, ""},
	}
	for _, tc := range cases {
		_, m := s.twirpCall(t, "GetCacheEntryDownloadURL", s.Token(), kv{"key": tc.key, "restore_keys": tc.restoreKeys, "version": "v"})
		if got, _ := m["matched_key"].(string); got != tc.want {
			t.Errorf("key %q restore %q: matched %q, want %q", tc.key, tc.restoreKeys, got, tc.want)
		}
	}
	// Entries lists final entries newest first.
	var keys []string
	for _, e := range s.Entries() {
		keys = append(keys, e.Key)
	}
	if got := strings.Join(keys, " "); got != "a-3 b-1 a a-2 a-1" {
		t.Fatalf("Entries order %q", got)
	}
}

func TestV1(t *testing.T) {
	s := New(t)
	auth := map[string]string{"Authorization": "Bearer " + s.Token(), "Content-Type": "application/json"}
	base := s.CacheURL() + "_apis/artifactcache/"
	if code, _ := do(t, http.MethodGet, base+"cache?keys=p-&version=v", nil, ""); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := do(t, http.MethodGet, base+"cache?keys=p-&version=v", auth, ""); code != 204 {
		t.Fatalf("miss: %d", code)
	}
	code, body := do(t, http.MethodPost, base+"caches", auth, `{"key":"p-1","version":"v"}`)
	var r struct{ CacheID int64 }
	if code != 201 || json.Unmarshal([]byte(body), &r) != nil || r.CacheID == 0 {
		t.Fatalf("reserve: %d %s", code, body)
	}
	if code, body := do(t, http.MethodPost, base+"caches", auth, `{"key":"p-1","version":"v"}`); code != 409 || !strings.Contains(body, "ArtifactCacheItemAlreadyExistsException") {
		t.Fatalf("duplicate: %d %s", code, body)
	}
	id := fmt.Sprint(r.CacheID)
	for _, chunk := range []struct{ rng, data string }{{"bytes 3-5/*", "def"}, {"bytes 0-2/*", "abc"}} {
		if code, body := do(t, http.MethodPatch, base+"caches/"+id, map[string]string{"Authorization": auth["Authorization"], "Content-Range": chunk.rng}, chunk.data); code != 204 {
			t.Fatalf("upload %s: %d %s", chunk.rng, code, body)
		}
	}
	if code, _ := do(t, http.MethodPost, base+"caches/"+id, auth, `{"size":5}`); code != 400 {
		t.Fatalf("commit with a wrong size: %d", code)
	}
	if code, _ := do(t, http.MethodPost, base+"caches/"+id, auth, `{"size":6}`); code != 204 {
		t.Fatalf("commit: %d", code)
	}
	code, body = do(t, http.MethodGet, base+"cache?keys=x,p-&version=v", auth, "")
	var e struct{ CacheKey, ArchiveLocation string }
	if code != 200 || json.Unmarshal([]byte(body), &e) != nil || e.CacheKey != "p-1" {
		t.Fatalf("hit: %d %s", code, body)
	}
	if code, data := do(t, http.MethodGet, e.ArchiveLocation, nil, ""); code != 200 || data != "abcdef" {
		t.Fatalf("download: %d %q", code, data)
	}
}

// TestModes: Fail answers 500 in each endpoint's dialect; Hang holds the call until
// the client gives up, and Close does not wait for it.
func TestModes(t *testing.T) {
	s := New(t)
	s.Put("k", "", []byte("x"))
	s.SetMode(Fail)
	if code, m := s.twirpCall(t, "GetCacheEntryDownloadURL", s.Token(), kv{"key": "k", "version": "v"}); code != 500 || m["code"] != "internal" {
		t.Fatalf("fail mode: %d %v", code, m)
	}
	if code, body := do(t, http.MethodGet, s.URL+"/blob/1?sig=x", nil, ""); code != 500 || !strings.Contains(body, "InternalError") {
		t.Fatalf("fail mode blob: %d %s", code, body)
	}
	s.SetMode(Normal)
	s.SetMode(Hang, OpGetDownloadURL)
	if code, _ := s.twirpCall(t, "CreateCacheEntry", s.Token(), kv{"key": "k2", "version": "v"}); code != 200 {
		t.Fatalf("only the named op hangs; create answered %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.ResultsURL()+"twirp/github.actions.results.api.v1.CacheService/GetCacheEntryDownloadURL",
		bytes.NewReader([]byte(`{"key":"k","version":"v"}`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("hang mode answered %d", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang mode: %v", err)
	}
	calls := s.CallsTo(OpGetDownloadURL)
	if len(calls) != 2 || calls[1].Status != 0 {
		t.Fatalf("hung call not recorded as such: %+v", calls)
	}
	s.Close() // returns although a handler may still be parked
}
