package cachetest

// The cache service v2: Twirp JSON, and the Azure-blob style signed URLs of its data.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) twirp(w http.ResponseWriter, r *http.Request, op Op, body []byte) {
	if op == OpUnknown || r.Method != http.MethodPost {
		twirpError(w, http.StatusNotFound, "bad_route", "no handler for path "+r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		twirpError(w, http.StatusNotFound, "bad_route", "unexpected Content-Type: "+ct)
		return
	}
	if err := s.authorized(r); err != nil {
		twirpError(w, http.StatusUnauthorized, "unauthenticated", err.Error())
		return
	}
	var req struct {
		Key         string      `json:"key"`
		RestoreKeys []string    `json:"restore_keys"`
		Version     string      `json:"version"`
		SizeBytes   json.Number `json:"size_bytes"` // protojson int64 is a string; accept both
	}
	if err := json.Unmarshal(body, &req); err != nil {
		twirpError(w, http.StatusBadRequest, "malformed", "the json request could not be decoded")
		return
	}
	if req.Key == "" || req.Version == "" {
		twirpError(w, http.StatusBadRequest, "invalid_argument", "key and version are required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case OpGetDownloadURL:
		e := s.match(append([]string{req.Key}, req.RestoreKeys...), req.Version)
		if e == nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "signed_download_url": "", "matched_key": ""})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "signed_download_url": s.blobURL(e, false), "matched_key": e.Key})
	case OpCreate:
		if s.find(req.Key, req.Version) != nil {
			twirpError(w, http.StatusConflict, "already_exists", "cache entry with the same key, version, and scope already exists")
			return
		}
		e := s.newEntry(req.Key, req.Version)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "signed_upload_url": s.blobURL(e, true)})
	case OpFinalize:
		e := s.find(req.Key, req.Version)
		if e == nil || e.Final {
			twirpError(w, http.StatusNotFound, "not_found", "no pending cache entry with this key and version")
			return
		}
		size, err := strconv.ParseInt(req.SizeBytes.String(), 10, 64)
		if err != nil || size != int64(len(e.Data)) {
			twirpError(w, http.StatusBadRequest, "invalid_argument",
				fmt.Sprintf("size_bytes %s does not match the %d bytes uploaded", req.SizeBytes, len(e.Data)))
			return
		}
		s.finalize(e)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "entry_id": strconv.FormatInt(e.ID, 10)})
	}
}

// azureError writes an Azure Storage error.
func azureError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>%s</Code><Message>%s</Message></Error>", code, xmlEscape(msg))
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (s *Server) blob(w http.ResponseWriter, r *http.Request, op Op, body []byte) {
	// Azure Storage sends these on every answer; go-actions-cache dereferences the
	// request id of an upload without checking it.
	h := w.Header()
	h.Set("x-ms-request-id", randomHex())
	h.Set("x-ms-version", "2024-08-04")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID(strings.TrimPrefix(r.URL.Path, "/blob/"))
	if e == nil {
		azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	want := e.readSig
	if op != OpBlobGet {
		want = e.writeSig
	}
	// A write URL stops working once the entry is final, as the real SAS expires.
	if q.Get("sig") != want || (op != OpBlobGet && e.Final) {
		azureError(w, http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request.")
		return
	}
	switch op {
	case OpBlobGet:
		if !e.Final {
			azureError(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
			return
		}
		serveBlob(w, r, e.Data)
	case OpBlobPut:
		if r.Header.Get("x-ms-blob-type") != "BlockBlob" {
			azureError(w, http.StatusBadRequest, "MissingRequiredHeader", "x-ms-blob-type: BlockBlob is required.")
			return
		}
		e.Data = append([]byte(nil), body...)
		e.blocks = map[string][]byte{}
		w.WriteHeader(http.StatusCreated)
	case OpBlobBlock:
		bid := q.Get("blockid")
		raw, err := base64.StdEncoding.DecodeString(bid)
		if bid == "" || err != nil || len(raw) > 64 {
			azureError(w, http.StatusBadRequest, "InvalidQueryParameterValue", "blockid must be base64 of at most 64 bytes.")
			return
		}
		e.blocks[bid] = append([]byte(nil), body...)
		w.WriteHeader(http.StatusCreated)
	case OpBlobBlockList:
		var list struct {
			XMLName xml.Name `xml:"BlockList"`
			Items   []struct {
				XMLName xml.Name
				ID      string `xml:",chardata"`
			} `xml:",any"`
		}
		if err := xml.Unmarshal(body, &list); err != nil {
			azureError(w, http.StatusBadRequest, "InvalidXmlDocument", "The block list is not valid XML.")
			return
		}
		var data []byte
		for _, it := range list.Items {
			b, ok := e.blocks[it.ID]
			if !ok || it.XMLName.Local == "Committed" {
				azureError(w, http.StatusBadRequest, "InvalidBlockList", "The specified block list is invalid.")
				return
			}
			data = append(data, b...)
		}
		e.Data = data
		e.blocks = map[string][]byte{}
		w.WriteHeader(http.StatusCreated)
	default:
		azureError(w, http.StatusBadRequest, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb.")
	}
}

// serveBlob answers Get Blob, honouring x-ms-range or Range "bytes=N-" / "bytes=N-M".
func serveBlob(w http.ResponseWriter, r *http.Request, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Accept-Ranges", "bytes")
	h.Set("x-ms-blob-type", "BlockBlob")
	rng := r.Header.Get("x-ms-range")
	if rng == "" {
		rng = r.Header.Get("Range")
	}
	if rng == "" {
		h.Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(data)
		}
		return
	}
	start, end, ok := parseRange(rng, int64(len(data)))
	if !ok {
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
		azureError(w, http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The range specified is invalid for the current size of the "+
			"resource.")
		return
	}
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(data)))
	h.Set("Content-Length", strconv.FormatInt(end-start+1, 10))
	w.WriteHeader(http.StatusPartialContent)
	if r.Method == http.MethodGet {
		_, _ = w.Write(data[start : end+1])
	}
}

func parseRange(s string, size int64) (start, end int64, ok bool) {
	spec, found := strings.CutPrefix(s, "bytes=")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 || start >= size {
		return 0, 0, false
	}
	end = size - 1
	if b != "" {
		e, err := strconv.ParseInt(b, 10, 64)
		if err != nil || e < start {
			return 0, 0, false
		}
		end = min(e, size-1)
	}
	return start, end, true
}
