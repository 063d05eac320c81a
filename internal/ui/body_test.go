package ui_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// countingBody is a request body of n bytes of filler after prefix that
// counts what the server read of it.
type countingBody struct {
	r    io.Reader
	read int64
}

func newCountingBody(prefix string, n int) *countingBody {
	return &countingBody{r: io.MultiReader(strings.NewReader(prefix), io.LimitReader(zeros{}, int64(n)))}
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestBodyCheckedBeforeRead sends state-changing requests with large
// bodies and a wrong CSRF token from a logged-in browser session, in
// process, counting what the server reads of each body: a body that is
// not a URL-encoded form, or announces more than MaxFormBytes, is refused
// before a byte is read; one that does not announce its length is cut off
// at MaxFormBytes. A small form with the right token still works.
func TestBodyCheckedBeforeRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	token := f.csrf(t, c, "/r/0/")
	srvURL, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cookies := c.Jar.Cookies(srvURL)
	const large = 8 << 20
	for _, tc := range []struct {
		name        string
		contentType string
		body        *countingBody
		announce    bool // Content-Length given
		want        int
		maxRead     int64
	}{
		{"multipart", "multipart/form-data; boundary=x", newCountingBody("--x\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n00\r\n--x\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\r\n\r\n", large), false,
			http.StatusUnsupportedMediaType, 0},
		{"text", "text/plain", newCountingBody("csrf=00&x=", large), false, http.StatusUnsupportedMediaType, 0},
		{"large form, announced", "application/x-www-form-urlencoded", newCountingBody("csrf=00&x=", large), true, http.StatusRequestEntityTooLarge, 0},
		{"large form, chunked", "application/x-www-form-urlencoded", newCountingBody("csrf=00&x=", large), false, http.StatusRequestEntityTooLarge, 1 << 20},
		{"small form, wrong token", "application/x-www-form-urlencoded", newCountingBody("csrf=00&x=", 10), false, http.StatusForbidden, 1 << 20},
		{"small form, right token", "application/x-www-form-urlencoded", newCountingBody("csrf="+token+"&x=", 10), false, http.StatusSeeOther, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/r/0/run/count", tc.body)
			req.ContentLength = -1
			if tc.announce {
				req.ContentLength = int64(len("csrf=00&x=")) + large
			}
			req.Header.Set("Content-Type", tc.contentType)
			for _, ck := range cookies {
				req.AddCookie(ck)
			}
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d\n%s", rec.Code, tc.want, bytes.TrimSpace(rec.Body.Bytes()))
			}
			if tc.body.read > tc.maxRead {
				t.Errorf("the server read %d bytes of the body, want at most %d", tc.body.read, tc.maxRead)
			}
		})
	}
}
