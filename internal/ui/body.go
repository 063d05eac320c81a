package ui

import (
	"errors"
	"mime"
	"net/http"
)

// MaxFormBytes bounds the body of a request: the dashboard's forms hold a
// CSRF token, a path and a few choices, and it takes no uploads.
const MaxFormBytes = 64 << 10

// checkBody lets a request's body in only if it is a URL-encoded form of
// at most MaxFormBytes (or there is none), and parses it. A body of
// another type (multipart: its files would go to temporary files), or one
// announced larger, is refused before a byte of it is read; one that turns
// out larger is refused after MaxFormBytes. It runs after authentication
// and before the CSRF check reads the token from the form.
func (s *Server) checkBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return true // a POST without a body (a bearer client's run)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		s.errorPage(w, r, http.StatusUnsupportedMediaType, "Refused", "The dashboard takes only URL-encoded forms.")
		return false
	}
	if r.ContentLength > MaxFormBytes {
		s.errorPage(w, r, http.StatusRequestEntityTooLarge, "Refused", "The form is larger than the dashboard's forms can be.")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.errorPage(w, r, http.StatusRequestEntityTooLarge, "Refused", "The form is larger than the dashboard's forms can be.")
		} else {
			s.errorPage(w, r, http.StatusBadRequest, "Refused", "The form could not be read.")
		}
		return false
	}
	return true
}
