package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
)

// cookieName is the session cookie.
const cookieName = "cloudstic_session"

// sessionKey keys the session in a request's context.
type sessionKey struct{}

// session is one browser's login: its nonce signs the cookie and derives
// the CSRF token. bearer marks a request authenticated by an
// Authorization header, which browsers never add on their own, so it
// needs no CSRF token.
type session struct {
	nonce  string
	bearer bool
}

func (s *Server) mac(label, nonce string) string {
	m := hmac.New(sha256.New, s.sessKey)
	m.Write([]byte(label + ":" + nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// csrfToken is the token every form of the session carries.
func (s *Server) csrfToken(sess session) string { return s.mac("csrf", sess.nonce) }

// newSession makes a session and sets its cookie.
func (s *Server) newSession(w http.ResponseWriter) (session, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return session{}, err
	}
	nonce := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: nonce + "." + s.mac("session", nonce), Path: "/",
		HttpOnly: true, Secure: s.cfg.Secure, SameSite: http.SameSiteStrictMode})
	return session{nonce: nonce}, nil
}

// cookieSession returns the session of a valid cookie.
func (s *Server) cookieSession(r *http.Request) (session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return session{}, false
	}
	nonce, sig, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac("session", nonce))) {
		return session{}, false
	}
	return session{nonce: nonce}, true
}

func equalSecret(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// authenticate lets a request in, or answers it with 401. With a token, a
// GET carrying ?token= logs the browser in (a session cookie) and is
// redirected to the same address without it, so the token stays out of
// the history and of every page.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (session, bool) {
	if s.cfg.User != "" {
		return s.basicAuth(w, r)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok && equalSecret(tok, s.cfg.Token) {
			return session{bearer: true}, true
		}
		s.unauthorized(w, r)
		return session{}, false
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		if r.Method != http.MethodGet || !equalSecret(tok, s.cfg.Token) {
			s.unauthorized(w, r)
			return session{}, false
		}
		if _, err := s.newSession(w); err != nil {
			http.Error(w, "cannot make a session: "+err.Error(), http.StatusInternalServerError)
			return session{}, false
		}
		q := r.URL.Query()
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return session{}, false
	}
	if sess, ok := s.cookieSession(r); ok {
		return sess, true
	}
	s.unauthorized(w, r)
	return session{}, false
}

// basicAuth checks HTTP basic credentials and keeps a session cookie for
// the CSRF token (browsers resend basic credentials to every request, a
// forged one too).
func (s *Server) basicAuth(w http.ResponseWriter, r *http.Request) (session, bool) {
	user, pass, ok := r.BasicAuth()
	if !ok || !equalSecret(user, s.cfg.User) || !equalSecret(pass, s.cfg.Password) {
		w.Header().Set("WWW-Authenticate", `Basic realm="cloudstic", charset="UTF-8"`)
		s.unauthorized(w, r)
		return session{}, false
	}
	if sess, ok := s.cookieSession(r); ok {
		return sess, true
	}
	sess, err := s.newSession(w)
	if err != nil {
		http.Error(w, "cannot make a session: "+err.Error(), http.StatusInternalServerError)
		return session{}, false
	}
	return sess, true
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	msg := "Open the address 'cloudstic ui' printed when it started: it carries the access token."
	if s.cfg.User != "" {
		msg = "Log in with the user and password given to 'cloudstic ui'."
	}
	s.errorPage(w, r, http.StatusUnauthorized, "Not logged in", msg)
}

// checkOrigin refuses a state-changing request sent from another origin.
// It reads only headers.
func (s *Server) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	// "null" is what a browser sends when it will not say (privacy
	// settings, sandboxed frames): the CSRF token still decides.
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			s.errorPage(w, r, http.StatusForbidden, "Refused", "The request came from another site.")
			return false
		}
	}
	return true
}

// checkCSRF refuses a state-changing request without the session's CSRF
// token, read from the form checkBody parsed.
func (s *Server) checkCSRF(w http.ResponseWriter, r *http.Request, sess session) bool {
	if sess.bearer {
		return true
	}
	if !equalSecret(r.PostFormValue("csrf"), s.csrfToken(sess)) {
		s.errorPage(w, r, http.StatusForbidden, "Refused", "The form's CSRF token is missing or wrong: reload the page and try again.")
		return false
	}
	return true
}
