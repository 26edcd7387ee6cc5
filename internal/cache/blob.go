package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	actionscache "github.com/tonistiigi/go-actions-cache"

	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// decodeBlob turns a restored entry into a table; one with no good line is an error, so the caller falls back.
func decodeBlob(data []byte, key string, max int64) (*weights.Table, []string, error) {
	if int64(len(data)) > max {
		return nil, nil, fmt.Errorf("entry %s is larger than %d bytes, so it is not a weight table", key, max)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, nil, fmt.Errorf("entry %s is binary data, not a weight table", key)
	}
	t, warns := weights.Parse(bytes.NewReader(data), "cache:"+key)
	if t.Len() == 0 && len(warns) > 0 {
		return nil, nil, fmt.Errorf("entry %s is not a weight table: %d lines, none of them \"<key> <seconds>\"", key, len(warns))
	}
	if len(warns) > maxParseWarnings {
		more := len(warns) - maxParseWarnings
		warns = append(warns[:maxParseWarnings:maxParseWarnings],
			fmt.Sprintf("cache:%s: %d more corrupt lines skipped", key, more))
	}
	return t, warns, nil
}

// describe says in one line why a cache call failed, without the library's URLs and dumps.
func (s *Store) describe(ctx context.Context, err error, timeout time.Duration) string {
	var re *azcore.ResponseError
	var he actionscache.HTTPError
	var se *json.SyntaxError
	var msg string
	switch {
	case ctx.Err() != nil:
		msg = "cancelled (" + ctx.Err().Error() + ")"
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("did not finish within %s", timeout)
	case errors.As(err, &re):
		msg = fmt.Sprintf("blob storage answered HTTP %d", re.StatusCode)
		if re.ErrorCode != "" {
			msg += " " + re.ErrorCode
		}
	case errors.As(err, &he) && errors.As(err, &se):
		// A body that is not JSON (a proxy's page): the status says what happened.
		msg = fmt.Sprintf("cache service answered HTTP %d %s", he.StatusCode, http.StatusText(he.StatusCode))
	case errors.As(err, &he):
		msg = fmt.Sprintf("cache service answered HTTP %d: %v", he.StatusCode, he.Err)
	case errors.As(err, &se):
		msg = "the cache service's answer is not JSON (" + se.Error() + ")"
	default:
		msg = err.Error()
	}
	if s.Protocol() == "v1" && s.c.ResultsURL != "" {
		msg = "the v2 service at ACTIONS_RESULTS_URL answered HTTP 404, so v1 at ACTIONS_CACHE_URL was used: " + msg
	} else if s.Protocol() == "v2" && errors.As(err, &he) && he.StatusCode == http.StatusNotFound {
		msg += " (no cache service v2 at ACTIONS_RESULTS_URL, and no ACTIONS_CACHE_URL to fall back to v1)"
	}
	return oneLine(msg, s.c.Token)
}

// maxWarning bounds one warning, in runes.
const maxWarning = 400

// signedQuery matches a URL's query, where signed blob URLs carry their signature.
var signedQuery = regexp.MustCompile(`(https?://[^\s?"'<>]*)\?[^\s"'<>]*`)

// oneLine makes msg one bounded line with no token, no signed URL query and no control character.
func oneLine(msg, token string) string {
	msg = redact(strings.ToValidUTF8(msg, "?"), token)
	msg = textfmt.OneLine(msg)
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, msg)
	msg = signedQuery.ReplaceAllString(msg, "$1?…")
	spaced := textfmt.OneLine(token)
	msg = clip(redact(redact(msg, token), spaced), maxWarning)
	// Clipping and deleting a non-UTF-8 token can split a character: repeat until stable.
	for {
		next := strings.ToValidUTF8(strip(strip(msg, token), spaced), "?")
		if next == msg {
			return msg
		}
		msg = next
	}
}

// redact removes token from s, and each long part of it, as a JWT's payload may be quoted alone.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	s = strings.ReplaceAll(s, token, "***")
	for _, part := range strings.Split(token, ".") {
		if len(part) >= 16 {
			s = strings.ReplaceAll(s, part, "***")
		}
	}
	// Only a token that contains '*' can survive the replacements above.
	return strip(s, token)
}

// strip deletes every occurrence of token, also those a deletion forms.
func strip(s, token string) string {
	for token != "" && strings.Contains(s, token) {
		s = strings.ReplaceAll(s, token, "")
	}
	return s
}

// clip bounds s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
