package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ErrConfig: the configuration cannot serve (no repositories, no way to
// authenticate), the sentinel error of New.
var ErrConfig = errors.New("bad dashboard configuration")

// Server is the dashboard's HTTP handler and its state: the running jobs
// and the growth rows computed so far.
type Server struct {
	cfg     frontend.Config
	tmpl    *templates
	mux     *http.ServeMux
	sessKey []byte // signs session cookies and derives CSRF tokens

	// ctx bounds the runs started from the page: they outlive the
	// request that started them, not the server.
	ctx context.Context

	mu     sync.Mutex
	jobs   map[string]*job
	growth map[int]growthCache // by repository index
}

// New checks cfg (see frontend.Config) and returns the dashboard. Runs started from the page
// stop when ctx ends.
func New(ctx context.Context, cfg frontend.Config) (*Server, error) {
	if len(cfg.Repos) == 0 {
		return nil, fmt.Errorf("%w: no repository to show", ErrConfig)
	}
	if cfg.Token == "" && (cfg.User == "" || cfg.Password == "") {
		return nil, fmt.Errorf("%w: an access token or a user and password are needed", ErrConfig)
	}
	for _, r := range cfg.Repos {
		for _, a := range r.Actions {
			if !validActionName(a.Name) {
				return nil, fmt.Errorf("%w: action name %q", ErrConfig, a.Name)
			}
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.LockPoll <= 0 {
		cfg.LockPoll = 2 * time.Second
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{ctx: ctx, cfg: cfg, tmpl: tmpl, sessKey: key, jobs: map[string]*job{}, growth: map[int]growthCache{}}
	s.routes()
	return s, nil
}

func validActionName(n string) bool {
	if n == "" {
		return false
	}
	for _, c := range n {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// ServeHTTP serves one request through the security checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if s.cfg.LoopbackOnly && !frontend.LoopbackHost(r.Host) {
		http.Error(w, "this dashboard answers only to localhost, 127.0.0.1 or [::1]", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path == "/static/style.css" || r.URL.Path == "/static/app.js" {
		s.mux.ServeHTTP(w, r) // no secret in them; the login page needs the style
		return
	}
	sess, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	// A state-changing request: its origin and its body's type and size
	// are checked before any of the body is read, the CSRF token in it
	// after.
	if r.Method != http.MethodGet && r.Method != http.MethodHead && (!s.checkOrigin(w, r) || !s.checkBody(w, r) || !s.checkCSRF(w, r, sess)) {
		return
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
}

// staticFiles serves the embedded stylesheet and script.
func staticFiles() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}
