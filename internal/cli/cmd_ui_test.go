package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
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

// lineSignal is a stderr that hands over the line holding the dashboard's
// address as soon as it is written.
type lineSignal struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan<- string
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		if m := regexp.MustCompile(`http://\S+`).FindString(sc.Text()); m != "" && l.addr != nil {
			l.addr <- m
			l.addr = nil
		}
	}
	return len(p), nil
}

// TestUIProfileRuns serves a profile's repository in process, runs its
// backup, forget+prune and check from the page as a browser would, and
// sees the new snapshot.
func TestUIProfileRuns(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	profiles := filepath.Join(dir, "profiles.yaml")
	yaml := fmt.Sprintf("version: 1\nstores:\n  disk:\n    uri: local:%s\nprofiles:\n  docs:\n    source: local:%s\n    store: disk\n    keep_last: 1\n",
		filepath.Join(dir, "store"), src)
	if err := os.WriteFile(profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := uxRun(t, dir, "init", "-no-encryption"); r.code != ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	stderr := &lineSignal{addr: addrs}
	exited := make(chan int, 1)
	go func() {
		exited <- Main(ctx, []string{"ui", "-listen", "127.0.0.1:0", "-profile", "docs", "-profiles-file", profiles},
			IO{Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }})
	}()
	var addr string
	select {
	case addr = <-addrs:
	case code := <-exited:
		t.Fatalf("ui exited %d before serving", code)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	get := func(u string) string {
		t.Helper()
		res, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }() // read in full below
		b, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", u, res.StatusCode, err, b)
		}
		return string(b)
	}
	base := strings.SplitN(addr, "?", 2)[0]
	page := get(addr) // logs in, lands on the index
	if !strings.Contains(page, "docs") {
		t.Fatalf("index:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(get(base + "r/0/"))
	if csrf == nil {
		t.Fatal("no CSRF token on the dashboard")
	}
	actions := regexp.MustCompile(`action="/r/0/run/([a-z0-9-]+)"`).FindAllStringSubmatch(get(base+"r/0/"), -1)
	if len(actions) != 3 {
		t.Fatalf("runs offered: %v, want backup, forget and check", actions)
	}
	for _, tc := range []struct{ action, want string }{{actions[0][1], "Snapshot"}, {actions[0][1], "Snapshot"},
		{actions[1][1], "Removed 1 snapshots"}, {actions[2][1], "No errors found"}} {
		res, err := c.PostForm(base+"r/0/run/"+tc.action, url.Values{"csrf": {csrf[1]}})
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close() // the job's address is all we need
		job := res.Request.URL.String()
		events := get(job + "/events") // the stream ends with the job
		if !strings.Contains(events, `data-done="true"`) || !strings.Contains(events, tc.want) || strings.Contains(events, `class="failed"`) {
			t.Errorf("run %s:\n%s", tc.action, events)
		}
	}
	dash := get(base + "r/0/")
	if n := strings.Count(dash, `class="snapshot"`); n != 1 {
		t.Errorf("after two backups and forget -keep-last 1: %d snapshots on the dashboard, want 1", n)
	}
	cancel()
	if code := <-exited; code == ExitOK || code == ExitUsage {
		t.Errorf("ui stopped by Ctrl-C exited %d", code)
	}
}
