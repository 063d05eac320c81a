package ui_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/ui"
)

// hostileName is a file name that is markup, planted in the snapshots.
const hostileName = "<img src=x onerror=alert(1)>.txt"

// hostileDir is a directory name that is markup.
const hostileDir = "<script>alert(2)<"

// fixture is a dashboard over a real repository with two snapshots whose
// names, tags and host are hostile.
type fixture struct {
	srv      *httptest.Server
	handler  *ui.Server // what srv serves, for requests made in process
	cfg      frontend.Config
	repo     *operation.Repo
	st       store.Store // the repository's store, for what a test plants past the dashboard
	src      string
	s1, s2   snapshot.WithID
	contents map[string]string // path in the snapshots -> bytes (s2)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newFixture backs up a small tree twice and serves it; tweak changes the
// config before the server starts.
func newFixture(t *testing.T, tweak func(*frontend.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	// Unencrypted: the key derivation of a password costs seconds under
	// -race, and the dashboard reads both kinds the same way.
	dir := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(dir), repo.InitOptions{NoEncryption: true}); err != nil {
		t.Fatal(err)
	}
	r, err := operation.Open(ctx, operation.Options{Store: operation.StoreOptions{URI: "local:" + dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() }) // a local store's Close fails never
	src := t.TempDir()
	f := &fixture{repo: r, st: local.New(dir), src: src, contents: map[string]string{
		"docs/report.txt":     "quarterly numbers\n",
		"docs/" + hostileName: "<script>alert('x')</script>\n",
		"photos/beach.jpg":    strings.Repeat("jpeg", 5000),
		"readme.md":           "hello\n",
	}}
	f.contents[hostileDir+"/..evil"] = "evil\n"
	for p, data := range f.contents {
		writeFile(t, filepath.Join(src, p), data)
	}
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.s1 = backupAt(t, r, src, "<b>host</b>", day, "<script>tag</script>")
	writeFile(t, filepath.Join(src, "docs", "new.txt"), "new file\n")
	f.contents["docs/new.txt"] = "new file\n"
	f.s2 = backupAt(t, r, src, "<b>host</b>", day.Add(24*time.Hour))
	f.cfg = frontend.Config{Token: "secret-token", LockPoll: 20 * time.Millisecond,
		Repos: []frontend.Repository{{Name: "<script>alert(3)</script>", Store: "local:../x", Repo: r,
			Actions: []frontend.Action{countAction("count", false), countAction("write", true)}}}}
	if tweak != nil {
		tweak(&f.cfg)
	}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	s, err := ui.New(ctx, f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.handler = s
	f.srv = httptest.NewServer(s)
	t.Cleanup(f.srv.Close)
	return f
}

// writer returns a writer on the fixture's repository (index loaded)
// under a shared lock held until the test ends, for what a test writes
// past the operation layer.
func (f *fixture) writer(t *testing.T) *repo.Writer {
	t.Helper()
	r, err := repo.Open(context.Background(), f.st, repo.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	return checktest.Writer(t, f.st, r)
}

// backupAt backs up src through the operation layer, as the CLI does.
func backupAt(t *testing.T, r *operation.Repo, src, host string, at time.Time, tags ...string) snapshot.WithID {
	t.Helper()
	res, err := operation.Backup(context.Background(), r, backup.Options{Path: src, Hostname: host, Tags: tags,
		Clock: clock.NewFake(at)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot.WithID{ID: res.ID, Snapshot: res.Snapshot}
}

// client returns an HTTP client that does not follow redirects, with a
// cookie jar; logged in when login is set.
func (f *fixture) client(t *testing.T, login bool) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if login {
		res := f.get(t, c, "/?token="+f.cfg.Token)
		if res.code != http.StatusSeeOther {
			t.Fatalf("login: %d %s", res.code, res.body)
		}
	}
	return c
}

// response is what one request returned.
type response struct {
	code   int
	header http.Header
	body   string
}

func (f *fixture) do(t *testing.T, c *http.Client, req *http.Request) response {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }() // read in full below
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{code: res.StatusCode, header: res.Header, body: string(b)}
}

func (f *fixture) get(t *testing.T, c *http.Client, path string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.do(t, c, req)
}

func (f *fixture) post(t *testing.T, c *http.Client, path string, form url.Values) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.do(t, c, req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf returns the CSRF token of the session c holds, from a page.
func (f *fixture) csrf(t *testing.T, c *http.Client, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(f.get(t, c, page).body)
	if m == nil {
		t.Fatalf("no CSRF token on %s", page)
	}
	return m[1]
}

// countAction is a run that reports three progress events, a log line
// and a summary naming itself, and fails when the context ends.
func countAction(name string, writes bool) frontend.Action {
	return frontend.Action{Name: name, Label: "Run " + name, Writes: writes, Run: func(ctx context.Context, out frontend.RunOutput) error {
		for i := int64(1); i <= 3; i++ {
			out.Progress(operation.Progress{Type: "progress", Op: name, FilesDone: i, FilesTotal: 3, BytesDone: i * 100, BytesTotal: 300, ETASeconds: 1})
		}
		if _, err := fmt.Fprintf(out.Log, "log line of <%s>\n", name); err != nil {
			return err
		}
		_, err := fmt.Fprintf(out.Summary, "%s finished: 3 files\n", name)
		return errors.Join(err, ctx.Err())
	}}
}
