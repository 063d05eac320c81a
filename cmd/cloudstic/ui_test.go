package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// These tests run `cloudstic ui` in process with the dashboard this
// binary wires in (dashboard.go): the CLI's own tests cannot, since the
// CLI does not import internal/ui.

// result is one in-process run of the command line.
type result struct {
	stdout, stderr string
	code           int
}

// run runs cloudstic ARGS against the local store DIR/store.
func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	args = append(args, "-store", "local:"+filepath.Join(dir, "store"))
	code := cli.Main(context.Background(), args, cli.IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Dashboard: dashboard})
	return result{out.String(), errb.String(), code}
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
		if m := regexp.MustCompile(`https?://\S+`).FindString(sc.Text()); m != "" && l.addr != nil {
			l.addr <- m
			l.addr = nil
		}
	}
	return len(p), nil
}

// TestUIProfileRuns serves a profile's repository in process, runs its
// backup (with its retention policy), forget+prune and check from the page
// as a browser would, and sees the new snapshot.
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
	if r := run(t, dir, "init", "-no-encryption"); r.code != cli.ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	u := startUI(t, "-profile", "docs", "-profiles-file", profiles)
	get, base := u.get, u.base
	if page := get(u.addr); !strings.Contains(page, "docs") { // logs in, lands on the index
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
	// The profile's backup applies its policy, as backup -profile does:
	// the second one removes the first snapshot.
	for _, tc := range []struct{ action, want string }{{actions[0][1], "No snapshots to remove"}, {actions[0][1], "1 snapshots have been removed"},
		{actions[1][1], "No snapshots to remove"}, {actions[2][1], "No errors found"}} {
		res, err := u.c.PostForm(base+"r/0/run/"+tc.action, url.Values{"csrf": {csrf[1]}})
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close() // the job's address is all we need
		job := res.Request.URL.String()
		events := eventData(t, get(job+"/events")) // the stream ends with the job
		if !strings.Contains(events, `data-done="true"`) || !strings.Contains(events, tc.want) || strings.Contains(events, `class="failed"`) {
			t.Errorf("run %s:\n%s", tc.action, events)
		}
	}
	dash := get(base + "r/0/")
	if n := strings.Count(dash, `class="snapshot"`); n != 1 {
		t.Errorf("after two backups and forget -keep-last 1: %d snapshots on the dashboard, want 1", n)
	}
	// A run the lock blocks fails at once and names the holder.
	held, err := lock.AcquireExclusive(context.Background(), local.New(filepath.Join(dir, "store")), "prune",
		lock.Options{Hostname: "other-host", PID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	res, err := u.c.PostForm(base+"r/0/run/"+actions[0][1], url.Values{"csrf": {csrf[1]}})
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close() // the job's address is all we need
	events := eventData(t, get(res.Request.URL.String()+"/events"))
	if !strings.Contains(events, `class="failed"`) || !strings.Contains(events, "other-host (pid 4242)") {
		t.Errorf("a backup blocked by an exclusive lock:\n%s", events)
	}
	if err := held.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	u.stop(t)
}

// eventData returns the data of every event of a server-sent event
// stream, each the JSON string of one data line, decoded and joined.
func eventData(t *testing.T, stream string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(stream, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal([]byte(data), &s); err != nil {
			t.Fatalf("event data is not a JSON string (%v): %q", err, data)
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

// uiServer is `cloudstic ui` running in process, and a logged-out client.
type uiServer struct {
	addr, base string
	c          *http.Client
	get        func(u string) string
	stop       func(t *testing.T)
}

// startUI runs `cloudstic ui -listen 127.0.0.1:0 ARGS...` until the test
// ends (or stop), and returns the address it printed (with the token).
func startUI(t *testing.T, args ...string) *uiServer {
	t.Helper()
	return startUIWith(t, func(string) string { return "" }, dashboard, args...)
}

// startUIWith is startUI with an environment and a dashboard of the
// test's.
func startUIWith(t *testing.T, getenv func(string) string, dash cli.Dashboard, args ...string) *uiServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	stderr := &lineSignal{addr: addrs}
	exited := make(chan int, 1)
	go func() {
		exited <- cli.Main(ctx, append([]string{"ui", "-listen", "127.0.0.1:0"}, args...),
			cli.IO{Stdin: bytes.NewReader(nil), Stdout: io.Discard, Stderr: stderr, Getenv: getenv, Dashboard: dash})
	}()
	u := &uiServer{}
	select {
	case u.addr = <-addrs:
	case code := <-exited:
		cancel()
		t.Fatalf("ui exited %d before serving: %s", code, stderr.buf.String())
	}
	stopped := false
	u.stop = func(t *testing.T) {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-exited; code == cli.ExitOK || code == cli.ExitUsage {
			t.Errorf("ui stopped by Ctrl-C exited %d", code)
		}
	}
	t.Cleanup(func() { u.stop(t) })
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	u.c = &http.Client{Jar: jar}
	u.base = strings.SplitN(u.addr, "?", 2)[0]
	u.get = func(addr string) string {
		t.Helper()
		res, err := u.c.Get(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }() // read in full below
		b, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v\n%s", addr, res.StatusCode, err, b)
		}
		return string(b)
	}
	return u
}

// TestUIAllProfiles: -all-profiles shows each store the enabled profiles
// use once, with the runs of every profile backing up into it.
func TestUIAllProfiles(t *testing.T) {
	dir := t.TempDir()
	var yaml strings.Builder
	yaml.WriteString("version: 1\nstores:\n")
	for _, st := range []string{"one", "two"} {
		if r := run(t, filepath.Join(dir, st), "init", "-no-encryption"); r.code != cli.ExitOK {
			t.Fatalf("init: %d %s", r.code, r.stderr)
		}
		fmt.Fprintf(&yaml, "  %s:\n    uri: local:%s\n", st, filepath.Join(dir, st, "store"))
	}
	yaml.WriteString("profiles:\n")
	for _, p := range []struct{ name, store string }{{"alpha", "one"}, {"beta", "one"}, {"gamma", "two"}} {
		fmt.Fprintf(&yaml, "  %s:\n    source: local:%s\n    store: %s\n", p.name, dir, p.store)
	}
	profiles := filepath.Join(dir, "profiles.yaml")
	if err := os.WriteFile(profiles, []byte(yaml.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	u := startUI(t, "-all-profiles", "-profiles-file", profiles)
	index := u.get(u.addr)
	if n := strings.Count(index, `<li><a href="/r/`); n != 2 {
		t.Fatalf("%d repositories on the index, want 2:\n%s", n, index)
	}
	runs := regexp.MustCompile(`id="run-([a-z0-9-]+)"`)
	for i, want := range []string{"backup-alpha-5 backup-beta-4 check", "backup-gamma-5 check"} {
		var got []string
		for _, m := range runs.FindAllStringSubmatch(u.get(fmt.Sprintf("%sr/%d/", u.base, i)), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("repository %d offers %v, want %s", i, got, want)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestUITLS: with -tls-cert and -tls-key the dashboard serves HTTPS only,
// and its session cookie is Secure.
func TestUITLS(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, dir, "init", "-no-encryption"); r.code != cli.ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	certFile, keyFile, pool := selfSigned(t, dir)
	u := startUI(t, "-store", "local:"+filepath.Join(dir, "store"), "-tls-cert", certFile, "-tls-key", keyFile)
	if !strings.HasPrefix(u.addr, "https://") {
		t.Fatalf("address %s is not https", u.addr)
	}
	u.c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	u.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := u.c.Get(u.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close() // only the headers matter
	if ck := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusSeeOther || !strings.Contains(ck, "Secure") {
		t.Errorf("login over TLS: %d, cookie %q", res.StatusCode, ck)
	}
	plain := "http://" + strings.TrimPrefix(u.base, "https://")
	if res, err := http.Get(plain); err == nil {
		_ = res.Body.Close() // only the status matters
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %d, want 400", res.StatusCode)
		}
	}
}
