package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/frontend"
)

// TestUIUsageErrors: bad flags fail at once with a one-line error and
// exit 2 (usage) or 1.
func TestUIUsageErrors(t *testing.T) {
	dir := t.TempDir()
	if r := uxRun(t, dir, "init", "-no-encryption"); r.code != ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"public address without TLS", []string{"-listen", "0.0.0.0:0"}, ExitUsage, "-listen-insecure"},
		{"no port", []string{"-listen", "127.0.0.1"}, ExitUsage, "HOST:PORT"},
		{"cert without key", []string{"-tls-cert", "c.pem"}, ExitUsage, "together"},
		{"user without password file", []string{"-auth-user", "me"}, ExitUsage, "together"},
		{"missing certificate", []string{"-tls-cert", filepath.Join(dir, "c.pem"), "-tls-key", filepath.Join(dir, "k.pem")}, ExitError, "-tls-cert"},
		{"missing restore root", []string{"-restore-root", filepath.Join(dir, "nope")}, ExitError, "-restore-root"},
		{"missing password file", []string{"-auth-user", "me", "-auth-password-file", filepath.Join(dir, "nope")}, ExitError, "-auth-password-file"},
		{"positional argument", []string{"extra"}, ExitUsage, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := uxRun(t, dir, append([]string{"ui"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}
	if r := uxRun(t, "", "ui", "-store", "local:"+filepath.Join(dir, "none")); r.code != ExitError || !strings.Contains(r.stderr, "cloudstic init") {
		t.Errorf("no repository: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestUIWithoutDashboard: a binary built without the dashboard (IO.Dashboard
// nil, as test/crash's) says so in one line, after checking the repository.
func TestUIWithoutDashboard(t *testing.T) {
	dir := t.TempDir()
	if r := uxRun(t, dir, "init", "-no-encryption"); r.code != ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	r := uxRun(t, dir, "ui", "-listen", "127.0.0.1:0")
	if r.code != ExitError || !strings.Contains(r.stderr, "no web dashboard") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr          string
		tls, insecure bool
		ok            bool
		insecureErr   bool
	}{
		{"127.0.0.1:8080", false, false, true, false},
		{"localhost:0", false, false, true, false},
		{"[::1]:8080", false, false, true, false},
		{"0.0.0.0:8080", false, false, false, true},
		{":8080", false, false, false, true},
		{"192.168.1.5:8080", true, false, true, false},
		{"0.0.0.0:8080", false, true, true, false},
		{"127.0.0.1", false, false, false, false},
		{"127.0.0.1:http", false, false, false, false},
		{"127.0.0.1:70000", false, false, false, false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := checkListen(tc.addr, tc.tls, tc.insecure)
			if (err == nil) != tc.ok || errors.Is(err, errInsecureListen) != tc.insecureErr {
				t.Errorf("checkListen(%q, tls %v, insecure %v) = %v", tc.addr, tc.tls, tc.insecure, err)
			}
		})
	}
}

// signalWriter collects what is written and closes ready once it holds
// want.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	ready chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.ready)
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestUIStopMessage: `cloudstic ui` stopped by Ctrl-C says so in the
// dashboard's own words, not a backup's ("the lock was released ...").
func TestUIStopMessage(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-no-encryption")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &signalWriter{want: "press Ctrl-C to stop", ready: make(chan struct{})}
	go func() {
		<-stderr.ready
		cancel() // what Ctrl-C does
	}()
	dash := func(context.Context, frontend.Config) (http.Handler, error) { return http.NotFoundHandler(), nil }
	code := Main(ctx, []string{"ui", "-listen", "127.0.0.1:0", "-store", "local:" + filepath.Join(dir, "store")},
		IO{Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }, Dashboard: dash})
	out := stderr.String()
	if code != ExitInterrupted || !strings.Contains(out, "cloudstic ui: stopped by Ctrl-C; the dashboard is no longer served") || strings.Contains(out, "lock was released") {
		t.Fatalf("exit %d, stderr:\n%s", code, out)
	}
}
