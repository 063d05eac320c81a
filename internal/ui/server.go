package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ErrConfig: the configuration cannot serve (no repositories, no way to
// authenticate), the sentinel error of New.
var ErrConfig = errors.New("bad dashboard configuration")

// Repository is one repository the dashboard shows, opened by the caller.
type Repository struct {
	// Name is what the page calls it (a profile or store name, or the
	// store URI); it is shown escaped and never used as a path.
	Name string
	// Store is the store's URI, shown on the page: it must hold no secret.
	Store string
	// Repo is the opened repository, with the lock settings of the
	// dashboard's own reads and restores. The dashboard reads through a
	// fresh view of it per request (operation.Repo.Fresh).
	Repo *operation.Repo
	// Actions are the runs offered on the page (a profile's backup,
	// forget+prune, check).
	Actions []Action
}

// Action is one run the page offers for a repository.
type Action struct {
	// Name identifies it in URLs: letters, digits and '-' only.
	Name string
	// Label is the button's text.
	Label string
	// Writes marks a run that changes the repository: -read-only hides it.
	Writes bool
	// Run does the work. It writes -json-progress lines (and any other
	// log line) to progress and its human summary to summary.
	Run func(ctx context.Context, progress, summary io.Writer) error
}

// Config is how the dashboard serves.
type Config struct {
	Repos []Repository
	// Token is the access token printed at start; User and Password, when
	// set, replace it with HTTP basic authentication.
	Token          string
	User, Password string
	// ReadOnly hides and refuses every writing action (runs that write,
	// restores).
	ReadOnly bool
	// RestoreRoot, when set, confines restore targets to this directory.
	RestoreRoot string
	// Secure marks cookies Secure (served over TLS).
	Secure bool
	// LoopbackOnly accepts only requests whose Host header names the
	// loopback interface (against DNS rebinding), for a 127.0.0.1 listener.
	LoopbackOnly bool
	// Clock tells the time (default clock.Real{}).
	Clock clock.Clock
	// LockPoll is how often the live lock panel re-reads the locks
	// (default 2 s).
	LockPoll time.Duration
}

// Server is the dashboard's HTTP handler and its state: the running jobs
// and the growth rows computed so far.
type Server struct {
	cfg     Config
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

// New checks cfg and returns the dashboard. Runs started from the page
// stop when ctx ends.
func New(ctx context.Context, cfg Config) (*Server, error) {
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
	if s.cfg.LoopbackOnly && !loopbackHost(r.Host) {
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

// loopbackHost reports whether a Host header names the loopback interface.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// staticFiles serves the embedded stylesheet and script.
func staticFiles() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}
