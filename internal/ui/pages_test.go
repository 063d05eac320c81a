package ui_test

import (
	"archive/zip"
	"bytes"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/frontend"
)

// TestRoutes: each page with good and bad input answers the right status
// and shows what it should.
func TestRoutes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	s1, s2 := f.s1.ID.String(), f.s2.ID.String()
	for _, tc := range []struct {
		name, path string
		code       int
		want       []string // substrings of the body
	}{
		{"index", "/", 200, []string{`href="/r/0/"`}},
		{"dashboard", "/r/0/", 200, []string{f.s1.ID.Short(), f.s2.ID.Short(), `id="timeline"`, "No locks", `id="run-count"`}},
		{"growth plot", "/r/0/growth.svg", 200, []string{"<svg", "dedup"}},
		{"browse root", "/r/0/s/" + s2 + "/", 200, []string{"docs/", "readme.md", "photos/"}},
		{"browse by prefix", "/r/0/s/" + f.s2.ID.Short() + "/?path=docs", 200, []string{"report.txt", "new.txt"}},
		{"browse latest", "/r/0/s/latest/?path=/docs/", 200, []string{"new.txt"}},
		{"browse climbs no higher than the root", "/r/0/s/latest/?path=../../..", 200, []string{"readme.md"}},
		{"browse a file", "/r/0/s/latest/?path=readme.md", 404, []string{"no directory"}},
		{"browse a missing path", "/r/0/s/latest/?path=nope", 404, []string{"no directory"}},
		{"bad snapshot id", "/r/0/s/xyz/", 400, []string{"not a snapshot id"}},
		{"markup as snapshot id", "/r/0/s/%3Cscript%3E/", 400, []string{"&lt;script&gt;"}},
		{"unknown snapshot", "/r/0/s/00000000/", 404, []string{"no snapshot id starts with"}},
		{"unknown repository", "/r/7/", 404, nil},
		{"repository not a number", "/r/x/", 404, nil},
		{"repository with a leading zero", "/r/00/", 404, nil},
		{"unknown page", "/nope", 404, nil},
		{"find", "/r/0/find?q=*.txt", 200, []string{"/docs/report.txt", "/docs/new.txt",
			`<a class="restore" href="/r/0/s/` + s2 + `/restore?path=%2fdocs%2freport.txt">restore</a>`}},
		{"find ignoring case", "/r/0/find?q=README.*&i=1", 200, []string{"/readme.md"}},
		{"find form", "/r/0/find", 200, []string{`name="q"`}},
		{"find bad pattern", "/r/0/find?q=%5B", 400, []string{"bad pattern"}},
		{"diff", "/r/0/diff?a=" + s1 + "&b=" + s2, 200, []string{"1 added", "docs/new.txt"}},
		{"diff form", "/r/0/diff", 200, []string{`name="a"`}},
		{"diff bad id", "/r/0/diff?a=zz&b=" + s2, 400, nil},
		{"diff unknown id", "/r/0/diff?a=00000000&b=" + s2, 404, nil},
		{"download missing", "/r/0/s/latest/download?path=nope.txt", 404, nil},
		{"restore form", "/r/0/s/latest/restore?path=docs", 200, []string{`name="target"`, `name="confirm"`}},
		{"unknown job", "/jobs/abc", 404, nil},
		{"unknown job events", "/jobs/abc/events", 404, nil},
		{"static", "/static/style.css", 200, []string{"body"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := f.get(t, c, tc.path)
			if res.code != tc.code {
				t.Fatalf("status %d, want %d\n%s", res.code, tc.code, res.body)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.body, w) {
					t.Errorf("body lacks %q:\n%s", w, res.body)
				}
			}
		})
	}
	for _, p := range []string{"/r/0/run/nope", "/r/9/run/count"} {
		if res := f.post(t, c, p, url.Values{"csrf": {f.csrf(t, c, "/r/0/")}}); res.code != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", p, res.code)
		}
	}
}

// TestHostileNamesEscaped: file names, directory names, tags, host names
// and a repository name made of markup appear escaped on every page, never
// as markup.
func TestHostileNamesEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	pages := append(getRoutes(f), "/r/0/s/latest/?path=docs", "/r/0/find?q=*", "/r/0/s/latest/?path="+url.QueryEscape(hostileDir),
		"/r/0/diff?a="+f.s1.ID.String()+"&b="+f.s2.ID.String())
	for _, p := range pages {
		if strings.Contains(p, "download") || strings.HasSuffix(p, ".svg") {
			continue
		}
		res := f.get(t, c, p)
		for _, raw := range []string{"<img src=x", "<script>alert", "<script>tag", "<b>host", "<script>alert(3)"} {
			if strings.Contains(res.body, raw) {
				t.Errorf("%s holds %q unescaped", p, raw)
			}
		}
	}
	checks := map[string][]string{
		"/":                        {"&lt;script&gt;alert(3)&lt;/script&gt;"},
		"/r/0/":                    {"&lt;script&gt;tag&lt;/script&gt;", "&lt;b&gt;host&lt;/b&gt;", "local:../x"},
		"/r/0/s/latest/?path=docs": {"&lt;img src=x onerror=alert(1)&gt;.txt"},
		"/r/0/s/latest/":           {"&lt;script&gt;alert(2)&lt;/"},
	}
	for p, wants := range checks {
		body := f.get(t, c, p).body
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks the escaped %q", p, w)
			}
		}
	}
	// The hostile file downloads byte for byte, under a safe header.
	res := f.get(t, c, "/r/0/s/latest/download?path="+url.QueryEscape("docs/"+hostileName))
	if res.body != f.contents["docs/"+hostileName] {
		t.Errorf("download of the hostile file: %q", res.body)
	}
	cd := res.header.Get("Content-Disposition")
	if disp, params, err := mime.ParseMediaType(cd); err != nil || disp != "attachment" || params["filename"] != hostileName {
		t.Errorf("Content-Disposition %q: %v %v", cd, params, err)
	}
}

// TestDownload: a file comes back byte for byte; a directory as a zip
// holding every file of it.
func TestDownload(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	for p, data := range f.contents {
		res := f.get(t, c, "/r/0/s/latest/download?path="+url.QueryEscape(p))
		if res.code != 200 || res.body != data {
			t.Errorf("%s: status %d, %d bytes, want %d bytes", p, res.code, len(res.body), len(data))
		}
		if ct := res.header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
	}
	for _, dir := range []string{"", "docs"} {
		res := f.get(t, c, "/r/0/s/latest/download?path="+dir)
		zr, err := zip.NewReader(bytes.NewReader([]byte(res.body)), int64(len(res.body)))
		if err != nil {
			t.Fatalf("%q: not a zip: %v", dir, err)
		}
		got := map[string]string{}
		for _, zf := range zr.File {
			if strings.HasSuffix(zf.Name, "/") {
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			got[zf.Name] = string(b)
		}
		for p, data := range f.contents {
			if (dir == "" || strings.HasPrefix(p, dir+"/")) && got[p] != data {
				t.Errorf("zip of %q: %s has %d bytes, want %d (entries %v)", dir, p, len(got[p]), len(data), zr.File)
			}
		}
	}
}

// TestReadOnly: -read-only hides the writing runs and the restore links,
// and refuses them when asked anyway; reading runs stay.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *frontend.Config) { c.ReadOnly = true })
	c := f.client(t, true)
	dash := f.get(t, c, "/r/0/").body
	if strings.Contains(dash, `id="run-write"`) || !strings.Contains(dash, `id="run-count"`) {
		t.Errorf("read-only dashboard: the writing run shown or the reading one hidden")
	}
	if strings.Contains(f.get(t, c, "/r/0/s/latest/").body, "restore") {
		t.Error("read-only browse page links to restore")
	}
	if body := f.get(t, c, "/r/0/find?q=*.txt").body; strings.Contains(body, "restore?") || !strings.Contains(body, "download?") {
		t.Error("read-only find page links to restore, or not to download")
	}
	token := f.csrf(t, c, "/r/0/")
	target := t.TempDir()
	for _, tc := range []struct {
		method, path string
	}{{"GET", "/r/0/s/latest/restore"}, {"POST", "/r/0/s/latest/restore"}, {"POST", "/r/0/run/write"}} {
		var res response
		if tc.method == "GET" {
			res = f.get(t, c, tc.path)
		} else {
			res = f.post(t, c, tc.path, url.Values{"csrf": {token}, "target": {target}, "confirm": {"yes"}})
		}
		if res.code != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", tc.method, tc.path, res.code)
		}
	}
	if res := f.post(t, c, "/r/0/run/count", url.Values{"csrf": {token}}); res.code != http.StatusSeeOther {
		t.Errorf("a reading run under -read-only: %d, want 303", res.code)
	}
}

// TestDownloadControlCharacterName: a file whose name holds CR, LF, ESC
// and a bidi control downloads under a Content-Disposition that holds
// none of them raw (RFC 2231/5987 encoding) and names it exactly; no
// header is forged.
func TestDownloadControlCharacterName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	const name = "a\r\nSet-Cookie: pwned=1\r\n\x1b[2J\u202etxt.exe"
	writeFile(t, filepath.Join(f.src, name), "payload\n")
	s3 := backupAt(t, f.repo, f.src, "host", time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC))
	c := f.client(t, true)
	res := f.get(t, c, "/r/0/s/"+s3.ID.Short()+"/download?path="+url.QueryEscape(name))
	if res.code != http.StatusOK || res.body != "payload\n" {
		t.Fatalf("download: %d %q", res.code, res.body)
	}
	if v := res.header.Values("Set-Cookie"); len(v) != 0 {
		t.Errorf("the name forged a header: Set-Cookie %q", v)
	}
	cd := res.header.Get("Content-Disposition")
	if strings.ContainsAny(cd, "\r\n\x1b\u202e") {
		t.Errorf("Content-Disposition holds raw control characters: %q", cd)
	}
	if disp, params, err := mime.ParseMediaType(cd); err != nil || disp != "attachment" || params["filename"] != name {
		t.Errorf("Content-Disposition %q: %q %v, want the exact name", cd, params, err)
	}
}
