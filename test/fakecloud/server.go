package fakecloud

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Server is the fake. The zero value is not usable; see New.
type Server struct {
	mu      sync.Mutex
	tenants map[string]*tenant
	// tokens maps every access token ever issued to its tenant; only the
	// tenant's current one is accepted.
	tokens map[string]*tenant
	// refresh maps refresh tokens to tenants.
	refresh map[string]*tenant
	device  map[string]*deviceCode
}

type deviceCode struct {
	t     *tenant
	polls int
}

// New returns an empty server.
func New() *Server {
	return &Server{tenants: map[string]*tenant{}, tokens: map[string]*tenant{}, refresh: map[string]*tenant{},
		device: map[string]*deviceCode{}}
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/_admin/"):
		s.admin(w, r)
	case strings.HasPrefix(p, "/oauth/"):
		s.oauth(w, r)
	case strings.HasPrefix(p, "/drive/v3/"), strings.HasPrefix(p, "/v1.0/"), strings.HasPrefix(p, "/download/"):
		t := s.authorize(w, r)
		if t == nil {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stats.Requests++
		t.stats.ByPath[routeName(p)]++
		f, ok := t.fault(p + "?" + r.URL.RawQuery)
		if ok && f.Status != 0 {
			writeFault(w, f)
			return
		}
		cw := w
		if ok && f.CutAfter > 0 {
			cw = &cutWriter{ResponseWriter: w, left: f.CutAfter}
		}
		if strings.HasPrefix(p, "/drive/v3/") {
			t.drive(cw, r)
		} else {
			t.graph(cw, r)
		}
	default:
		http.NotFound(w, r)
	}
}

// routeName is a request's path with ids left out, for the counters:
// "/drive/v3/files", "/drive/v3/files/*", "/v1.0/drives/*/items/*/content".
func routeName(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if i > 0 && (strings.Contains(s, "-i") || strings.HasPrefix(s, "root-") || strings.HasPrefix(s, "drive-") || strings.HasPrefix(s, "sd-")) {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, "/")
}

// authorize finds the tenant of the request's bearer token; a stale or
// unknown token gets 401.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) *tenant {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	t := s.tokens[tok]
	s.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/download/") {
		// Pre-authenticated download URLs, as Graph's: the tenant is in them.
		s.mu.Lock()
		t = s.tenants[r.URL.Query().Get("t")]
		s.mu.Unlock()
		if t != nil {
			t.mu.Lock()
			t.stats.ByPath = orInit(t.stats.ByPath)
			t.mu.Unlock()
			return t
		}
	}
	if !ok || t == nil {
		writeErr(w, http.StatusUnauthorized, "unauthenticated", "no valid bearer token")
		return nil
	}
	t.mu.Lock()
	current := t.access == tok
	t.stats.ByPath = orInit(t.stats.ByPath)
	t.mu.Unlock()
	if !current {
		writeErr(w, http.StatusUnauthorized, "authError", "access token expired")
		return nil
	}
	return t
}

func orInit(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// writeFault answers with an injected failure.
func writeFault(w http.ResponseWriter, f Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
	}
	reason := f.Reason
	if reason == "" {
		reason = http.StatusText(f.Status)
	}
	writeErr(w, f.Status, reason, "injected fault")
}

// writeErr answers an error in the shape both APIs share closely enough:
// Google's error.errors[].reason and Graph's error.code.
func writeErr(w http.ResponseWriter, status int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{ //nolint:errchkjson // test server
		"code": reasonCode(status, reason), "message": msg,
		"errors": []map[string]string{{"reason": reason, "message": msg}},
	}})
}

// reasonCode is Drive's numeric code or Graph's string code; both
// clients read what they know.
func reasonCode(status int, reason string) any {
	if status >= 400 {
		return status
	}
	return reason
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) //nolint:errchkjson // test server
}

// cutWriter writes only the first left bytes of a body, then aborts the
// connection: a stream cut mid-body.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if len(b) > c.left {
		n, _ := c.ResponseWriter.Write(b[:c.left]) // aborting anyway
		c.left = 0
		if f, ok := c.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		_ = n
		panic(http.ErrAbortHandler)
	}
	c.left -= len(b)
	return c.ResponseWriter.Write(b)
}

// pkceOK checks a PKCE verifier against an S256 challenge.
func pkceOK(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:]) == challenge
}

// serveContent writes data honouring Range (bytes=N- and bytes=N-M).
func (t *tenant) serveContent(w http.ResponseWriter, r *http.Request, data []byte) {
	start, end := 0, len(data)
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" {
		spec, ok := strings.CutPrefix(rg, "bytes=")
		a, b, _ := strings.Cut(spec, "-")
		s, err := strconv.Atoi(a)
		if !ok || err != nil || s > len(data) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start = s
		if e, err := strconv.Atoi(b); err == nil && e+1 < end {
			end = e + 1
		}
		status = http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end-1, len(data)))
	}
	w.Header().Set("Content-Length", strconv.Itoa(end-start))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(status)
	t.stats.Downloads++
	served := end - start
	if cw, ok := w.(*cutWriter); ok && cw.left < served {
		served = cw.left // the rest is cut
	}
	t.stats.BytesServed += int64(served)
	_, _ = w.Write(data[start:end]) // the client sees a cut body
}
