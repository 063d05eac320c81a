package ui_test

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/ui"
)

// getRoutes are every page a browser GETs, with good input.
func getRoutes(f *fixture) []string {
	id := f.s2.ID.String()
	return []string{"/", "/r/0/", "/r/0/growth.svg", "/r/0/find?q=*.txt", "/r/0/diff?a=" + f.s1.ID.Short() + "&b=" + id,
		"/r/0/s/" + id + "/", "/r/0/s/latest/?path=docs", "/r/0/s/latest/download?path=readme.md",
		"/r/0/s/latest/restore?path=docs"}
}

// TestNoTokenRefused: every route, without the token or with a wrong one,
// answers 401 and shows nothing of the repository.
func TestNoTokenRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	anon := f.client(t, false)
	for _, p := range append(getRoutes(f), "/r/0/locks", "/jobs/0123", "/metrics") {
		for _, variant := range []struct{ name, suffix, bearer string }{
			{"no token", "", ""},
			{"wrong token", "token=wrong", ""},
			{"wrong bearer", "", "wrong"},
		} {
			t.Run(variant.name+" "+p, func(t *testing.T) {
				u := p
				if variant.suffix != "" {
					sep := "?"
					if strings.Contains(u, "?") {
						sep = "&"
					}
					u += sep + variant.suffix
				}
				req, err := http.NewRequest(http.MethodGet, f.srv.URL+u, nil)
				if err != nil {
					t.Fatal(err)
				}
				if variant.bearer != "" {
					req.Header.Set("Authorization", "Bearer "+variant.bearer)
				}
				res := f.do(t, anon, req)
				if res.code != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401", res.code)
				}
				if strings.Contains(res.body, "report.txt") || strings.Contains(res.body, "alert(3)") {
					t.Errorf("the refusal shows repository content:\n%s", res.body)
				}
			})
		}
	}
	for _, p := range []string{"/r/0/run/count", "/r/0/s/latest/restore"} {
		if res := f.post(t, anon, p, url.Values{"target": {t.TempDir()}, "confirm": {"yes"}}); res.code != http.StatusUnauthorized {
			t.Errorf("POST %s without a session: %d, want 401", p, res.code)
		}
	}
}

// TestTokenLogin: the token in the URL sets a strict, HttpOnly session
// cookie and redirects to the address without it; no page carries it.
func TestTokenLogin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, false)
	res := f.get(t, c, "/r/0/?token="+f.cfg.Token+"&x=1")
	if res.code != http.StatusSeeOther || res.header.Get("Location") != "/r/0/?x=1" {
		t.Fatalf("login: %d to %q", res.code, res.header.Get("Location"))
	}
	ck := res.header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(ck, want) {
			t.Errorf("cookie %q lacks %s", ck, want)
		}
	}
	for _, p := range getRoutes(f) {
		res := f.get(t, c, p)
		if res.code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, res.code, res.body)
		}
		if strings.Contains(res.body, f.cfg.Token) {
			t.Errorf("GET %s: the page holds the access token", p)
		}
		for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy"} {
			if res.header.Get(h) == "" {
				t.Errorf("GET %s: no %s header", p, h)
			}
		}
	}
	// A POST with the token in the URL does not log in.
	if res := f.post(t, f.client(t, false), "/r/0/run/check?token="+f.cfg.Token, nil); res.code != http.StatusUnauthorized {
		t.Errorf("POST with ?token=: %d, want 401", res.code)
	}
	// A forged cookie is refused.
	jar := f.client(t, false)
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/r/0/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "cloudstic_session", Value: "00.11"})
	if res := f.do(t, jar, req); res.code != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d, want 401", res.code)
	}
	// The bearer header works for scripts.
	req, err = http.NewRequest(http.MethodGet, f.srv.URL+"/r/0/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.cfg.Token)
	if res := f.do(t, jar, req); res.code != http.StatusOK {
		t.Errorf("bearer: %d, want 200", res.code)
	}
}

// TestCSRF: a state-changing request needs the session's CSRF token and
// must not come from another origin.
func TestCSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	other := f.client(t, true) // another session: its token is not ours
	token := f.csrf(t, c, "/r/0/")
	otherToken := f.csrf(t, other, "/r/0/")
	target := t.TempDir()
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		origin string
		want   int
	}{
		{"run without token", "/r/0/run/count", url.Values{}, "", http.StatusForbidden},
		{"run with a wrong token", "/r/0/run/count", url.Values{"csrf": {"00"}}, "", http.StatusForbidden},
		{"run with another session's token", "/r/0/run/count", url.Values{"csrf": {otherToken}}, "", http.StatusForbidden},
		{"run from another origin", "/r/0/run/count", url.Values{"csrf": {token}}, "http://evil.example", http.StatusForbidden},
		{"restore without token", "/r/0/s/latest/restore", url.Values{"target": {target}, "confirm": {"yes"}}, "", http.StatusForbidden},
		{"run with the token", "/r/0/run/count", url.Values{"csrf": {token}}, "", http.StatusSeeOther},
		{"run with the token from this origin", "/r/0/run/count", url.Values{"csrf": {token}}, f.srv.URL, http.StatusSeeOther},
		{"run with the token, origin withheld", "/r/0/run/count", url.Values{"csrf": {token}}, "null", http.StatusSeeOther},
		{"origin withheld, no token", "/r/0/run/count", url.Values{}, "null", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+tc.path, strings.NewReader(tc.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if res := f.do(t, c, req); res.code != tc.want {
				t.Errorf("status %d, want %d\n%s", res.code, tc.want, res.body)
			}
		})
	}
	if entries, err := os.ReadDir(target); err != nil || len(entries) != 0 {
		t.Errorf("a refused restore wrote %v (%v)", entries, err)
	}
}

// TestBasicAuth: with a user and password, requests need them, and the
// session still carries a CSRF token.
func TestBasicAuth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *frontend.Config) { c.Token, c.User, c.Password = "", "admin", "pass word" })
	c := f.client(t, false)
	for _, tc := range []struct {
		name, user, pass string
		want             int
	}{{"none", "", "", 401}, {"wrong password", "admin", "nope", 401}, {"wrong user", "root", "pass word", 401}, {"right", "admin", "pass word", 200}} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/r/0/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.pass)
			}
			res := f.do(t, c, req)
			if res.code != tc.want {
				t.Fatalf("status %d, want %d", res.code, tc.want)
			}
			if tc.want == 401 && res.header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate challenge")
			}
			if tc.want == 200 && !strings.Contains(res.body, `name="csrf"`) {
				t.Error("the page has no CSRF token")
			}
		})
	}
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/r/0/run/count", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", "pass word")
	if res := f.do(t, c, req); res.code != http.StatusForbidden {
		t.Errorf("POST with basic credentials but no CSRF token: %d, want 403", res.code)
	}
}

// TestLoopbackOnly: a 127.0.0.1 dashboard answers only to loopback host
// names (DNS rebinding).
func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *frontend.Config) { c.LoopbackOnly = true })
	c := f.client(t, false)
	for host, want := range map[string]int{"evil.example:80": http.StatusMisdirectedRequest, "localhost:8080": http.StatusUnauthorized,
		"127.0.0.1": http.StatusUnauthorized, "[::1]:9": http.StatusUnauthorized} {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if res := f.do(t, c, req); res.code != want {
			t.Errorf("Host %s: %d, want %d", host, res.code, want)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	good := f.cfg
	for name, tweak := range map[string]func(c *frontend.Config){
		"no repository":     func(c *frontend.Config) { c.Repos = nil },
		"no way to log in":  func(c *frontend.Config) { c.Token = "" },
		"user, no password": func(c *frontend.Config) { c.Token, c.User = "", "u" },
		"bad action name": func(c *frontend.Config) {
			c.Repos = []frontend.Repository{{Name: "x", Repo: f.repo, Actions: []frontend.Action{{Name: "../x"}}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := good
			tweak(&cfg)
			if _, err := ui.New(t.Context(), cfg); !errors.Is(err, ui.ErrConfig) {
				t.Errorf("New: %v, want ErrConfig", err)
			}
		})
	}
}
