package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// event is one server-sent event: its name and its data, decoded from the
// one JSON string the server sends. bad says what was wrong with the
// event's framing, if anything.
type event struct{ name, data, bad string }

// sseLines splits an event stream into lines as browsers do: a line ends
// at CR LF, LF or CR (bufio.ScanLines would not end one at a lone CR).
func sseLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, c := range data {
		switch {
		case c == '\n':
			return i + 1, data[:i], nil
		case c == '\r' && i+1 < len(data):
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		case c == '\r' && atEOF:
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil // a CR at the end of the buffer may be the start of CR LF
}

// parseEvent makes one event of its lines: an event line, then exactly
// one data line holding a JSON string.
func parseEvent(lines []string) event {
	var ev event
	var data []string
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "event: "):
			if ev.name != "" {
				ev.bad = "two event lines"
			}
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			ev.bad = fmt.Sprintf("a line that is neither event nor data: %q", line)
		}
	}
	if len(data) != 1 {
		ev.bad = fmt.Sprintf("%d data lines: %q", len(data), data)
		ev.data = strings.Join(data, "\n")
		return ev
	}
	if err := json.Unmarshal([]byte(data[0]), &ev.data); err != nil {
		ev.bad = fmt.Sprintf("data is not a JSON string (%v): %q", err, data[0])
		ev.data = data[0]
	}
	return ev
}

// events opens an event stream and returns its events until it ends or
// the test does.
func (f *fixture) events(t *testing.T, c *http.Client, path string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan event)
	go func() {
		defer close(out)
		defer func() { _ = res.Body.Close() }() // the stream is over either way
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		sc.Split(sseLines)
		var lines []string
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				lines = append(lines, line)
				continue
			}
			select {
			case out <- parseEvent(lines):
			case <-ctx.Done():
				return
			}
			lines = nil
		}
	}()
	return out
}

// waitEvent returns the first event of kind name whose data holds want.
func waitEvent(t *testing.T, evs <-chan event, name, want string) event {
	t.Helper()
	timeout := time.NewTimer(60 * time.Second) // a hung stream fails rather than hangs
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the stream ended before a %s event with %q", name, want)
			}
			if ev.bad != "" {
				t.Fatalf("a badly framed event: %s\n%+v", ev.bad, ev)
			}
			if ev.name == name && strings.Contains(ev.data, want) {
				return ev
			}
		case <-timeout.C:
			t.Fatalf("no %s event with %q", name, want)
		}
	}
}

// TestRunShowsProgressAndSummary: a run started from the page streams
// its progress, log and summary, and its page shows the end state.
func TestRunShowsProgressAndSummary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	res := f.post(t, c, "/r/0/run/count", url.Values{"csrf": {f.csrf(t, c, "/r/0/")}})
	job := res.header.Get("Location")
	if res.code != http.StatusSeeOther || !strings.HasPrefix(job, "/jobs/") {
		t.Fatalf("run: %d to %q", res.code, job)
	}
	evs := f.events(t, c, job+"/events")
	last := waitEvent(t, evs, "job", `data-done="true"`)
	for _, want := range []string{"count finished: 3 files", "log line of &lt;count&gt;", "3 of 3 files", "100%"} {
		if !strings.Contains(last.data, want) {
			t.Errorf("final job panel lacks %q:\n%s", want, last.data)
		}
	}
	waitEvent(t, evs, "end", "")
	page := f.get(t, c, job).body
	if !strings.Contains(page, "count finished") || !strings.Contains(page, `class="ok"`) {
		t.Errorf("job page:\n%s", page)
	}
}

// TestLockPanelLive: the lock panel's stream shows a lock while it is
// held, with its operation and holder, and drops it once released.
func TestLockPanelLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	evs := f.events(t, c, "/r/0/locks")
	waitEvent(t, evs, "locks", "No locks")
	ctx := context.Background()
	l, err := lock.AcquireShared(ctx, f.st, "backup", lock.Options{Hostname: "<b>web1</b>", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, evs, "locks", "backup")
	for _, want := range []string{"&lt;b&gt;web1&lt;/b&gt; (pid 42)", "shared", "live", "data-remaining"} {
		if !strings.Contains(ev.data, want) {
			t.Errorf("lock panel lacks %q:\n%s", want, ev.data)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, evs, "locks", "No locks")
}

// TestLockPanelHostileHolder: a lock object forged into the store (no key
// needed) whose holder and operation hold CR, LF and ESC arrives as one
// locks event whose data is one JSON string: a CR or LF cannot end the
// data line and start a forged field or event.
func TestLockPanelHostileHolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	const evil = "evil\rdata: forged\revent: job\r\nretry: 1\n\x1b[2J\u2028id: 7"
	payload, err := json.Marshal(map[string]any{"operation": "op-" + evil, "holder": "holder-" + evil, "is_shared": true,
		"acquired_at": time.Now().UTC().Format(time.RFC3339), "expires_at": "2999-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Put(context.Background(), lock.SharedPrefix+"20260101T000000Z-0123456789abcdef", payload, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, f.events(t, c, "/r/0/locks"), "locks", "holder-evil")
	for _, want := range []string{"holder-" + evil, "op-" + evil} {
		if !strings.Contains(ev.data, want) {
			t.Errorf("lock panel lacks %q:\n%s", want, ev.data)
		}
	}
}

// TestRestore: targets are checked (absolute, inside -restore-root even
// through symbolic links, confirmed) before anything is written; a good
// one restores the files byte for byte.
func TestRestore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *frontend.Config) { c.RestoreRoot = root })
	c := f.client(t, true)
	token := f.csrf(t, c, "/r/0/")
	for _, tc := range []struct {
		name, target, path, confirm string
		code                        int
		want                        string
	}{
		{"no target", "", "docs", "yes", 400, "give the directory"},
		{"relative target", "out", "docs", "yes", 400, "not an absolute path"},
		{"outside the root", outside, "docs", "yes", 400, "outside the restore root"},
		{"climbing out", root + "/../x", "docs", "yes", 400, "outside the restore root"},
		{"through a symlink", filepath.Join(root, "link", "x"), "docs", "yes", 400, "outside the restore root"},
		{"not confirmed", filepath.Join(root, "a"), "docs", "", 400, "confirm"},
		{"missing path", filepath.Join(root, "a"), "nope", "yes", 404, "no directory"},
		{"bad overwrite mode", filepath.Join(root, "a"), "docs", "yes", 400, "want always"},
		{"overwrite into a zip", filepath.Join(root, "a.zip"), "docs", "yes", 400, "not zip files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ow := map[string]string{"bad overwrite mode": "sometimes", "overwrite into a zip": "always"}[tc.name]
			res := f.post(t, c, "/r/0/s/latest/restore", url.Values{"csrf": {token}, "target": {tc.target}, "path": {tc.path},
				"confirm": {tc.confirm}, "overwrite": {ow}})
			if res.code != tc.code || !strings.Contains(res.body, tc.want) {
				t.Errorf("status %d, want %d with %q:\n%s", res.code, tc.code, tc.want, res.body)
			}
		})
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Fatalf("refused restores wrote outside the root: %v %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(root, "a")); !os.IsNotExist(err) {
		t.Fatalf("a refused restore created its target: %v", err)
	}
	for _, tc := range []struct{ name, path, target string }{{"directory", "docs", "dir"}, {"one file", "readme.md", "file"}, {"everything", "", "all"}} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(root, tc.target)
			res := f.post(t, c, "/r/0/s/"+f.s2.ID.Short()+"/restore", url.Values{"csrf": {token}, "target": {target}, "path": {tc.path}, "confirm": {"yes"}})
			if res.code != http.StatusSeeOther {
				t.Fatalf("restore: %d\n%s", res.code, res.body)
			}
			ev := waitEvent(t, f.events(t, c, res.header.Get("Location")+"/events"), "job", `data-done="true"`)
			if !strings.Contains(ev.data, "Restored snapshot "+f.s2.ID.Short()) {
				t.Fatalf("restore job:\n%s", ev.data)
			}
			for p, data := range f.contents {
				if tc.path != "" && p != tc.path && !strings.HasPrefix(p, tc.path+"/") {
					continue
				}
				got, err := os.ReadFile(filepath.Join(target, p))
				if err != nil || string(got) != data {
					t.Errorf("%s: %d bytes (%v), want %d", p, len(got), err, len(data))
				}
			}
		})
	}
}

// TestRestoreOverwrite: existing files stay by default and are replaced
// with overwrite=always, as restore -overwrite.
func TestRestoreOverwrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.client(t, true)
	token := f.csrf(t, c, "/r/0/")
	target := t.TempDir()
	mine := filepath.Join(target, "readme.md")
	for _, tc := range []struct{ overwrite, want string }{{"", "mine\n"}, {"never", "mine\n"}, {"always", f.contents["readme.md"]}} {
		t.Run("overwrite "+tc.overwrite, func(t *testing.T) {
			writeFile(t, mine, "mine\n")
			res := f.post(t, c, "/r/0/s/latest/restore", url.Values{"csrf": {token}, "target": {target}, "path": {"readme.md"},
				"confirm": {"yes"}, "overwrite": {tc.overwrite}, "verify": {"yes"}})
			if res.code != http.StatusSeeOther {
				t.Fatalf("restore: %d\n%s", res.code, res.body)
			}
			ev := waitEvent(t, f.events(t, c, res.header.Get("Location")+"/events"), "job", `data-done="true"`)
			if strings.Contains(ev.data, "failed") {
				t.Fatalf("restore failed:\n%s", ev.data)
			}
			if got, err := os.ReadFile(mine); err != nil || string(got) != tc.want {
				t.Errorf("readme.md holds %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}
