package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// profileWorld is a working directory (also $HOME) holding four sources,
// a repository and a profiles file whose profiles back each source up
// into it, with the source written each way a user may write it.
type profileWorld struct {
	dir, profiles, store string
	env                  map[string]string
	// keep is each source's keep_last, by the source as recorded.
	keep map[string]int
}

func newProfileWorld(t *testing.T) *profileWorld {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		src := filepath.Join(dir, fmt.Sprintf("data%d", i))
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "f.txt"), []byte(strings.Repeat("data", 1000*i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir) // a relative source is relative to the working directory, as -source
	w := &profileWorld{dir: dir, profiles: filepath.Join(dir, "profiles.yaml"), store: "local:" + filepath.Join(dir, "repo"),
		env: map[string]string{"HOME": dir, "CLOUDSTIC_CONFIG_DIR": filepath.Join(dir, "cfg")},
		keep: map[string]int{"local:" + filepath.Join(dir, "data1"): 1, "local:" + filepath.Join(dir, "data2"): 2,
			"local:" + filepath.Join(dir, "data3"): 1, "local:" + filepath.Join(dir, "data4"): 2}}
	yaml := fmt.Sprintf(`version: 1
stores:
  s1:
    uri: %s
profiles:
  rel:   {source: "local:./data1", store: s1, keep_last: 1}
  home:  {source: "local:~/data2/", store: s1, keep_last: 2}
  slash: {source: "local:%s/data3/", store: s1, keep_last: 1, prune: true}
  abs:   {source: "local:%s/data4", store: s1, keep_last: 2}
`, w.store, dir, dir)
	if err := os.WriteFile(w.profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := w.run(t, "init", "-no-encryption", "-store", w.store); r.code != cli.ExitOK {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	return w
}

func (w *profileWorld) getenv(k string) string { return w.env[k] }

// run runs cloudstic in process with the world's environment.
func (w *profileWorld) run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, cli.IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: w.getenv, Dashboard: dashboard})
	return result{out.String(), errb.String(), code}
}

// snapshots returns the repository's snapshot ids by source.
func (w *profileWorld) snapshots(t *testing.T) map[string][]string {
	t.Helper()
	r := w.run(t, "list", "-json", "-store", w.store)
	if r.code != cli.ExitOK {
		t.Fatalf("list: %d %s", r.code, r.stderr)
	}
	var doc struct {
		Snapshots []struct {
			ID     string `json:"id"`
			Source string `json:"source"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	snaps := doc.Snapshots
	out := map[string][]string{}
	for _, s := range snaps {
		out[s.Source] = append(out[s.Source], s.ID)
	}
	return out
}

// checkKept checks that each source has exactly its keep_last snapshots,
// none of them in before (the runs since made them all).
func (w *profileWorld) checkKept(t *testing.T, how string, before map[string][]string) map[string][]string {
	t.Helper()
	now := w.snapshots(t)
	if len(now) != len(w.keep) {
		t.Errorf("%s: snapshots of %d sources, want %d: %v", how, len(now), len(w.keep), now)
	}
	for src, keep := range w.keep {
		if len(now[src]) != keep {
			t.Errorf("%s: %s has %d snapshots, want keep_last %d", how, src, len(now[src]), keep)
		}
		for _, id := range now[src] {
			for _, old := range before[src] {
				if id == old {
					t.Errorf("%s: %s kept the older snapshot %s", how, src, id)
				}
			}
		}
	}
	return now
}

// TestProfileRetentionEverywhere is issue 29's bug: a profile's keep_*
// did nothing unless its source was written as an absolute path. With
// sources relative, under ~, with a trailing slash and absolute, three
// runs keep exactly keep_last snapshots of each, run one by one with
// backup -profile, with -all-profiles, and from the dashboard.
func TestProfileRetentionEverywhere(t *testing.T) {
	w := newProfileWorld(t)
	for _, name := range []string{"rel", "home", "slash", "abs"} {
		for range 3 {
			if r := w.run(t, "backup", "-profile", name, "-profiles-file", w.profiles); r.code != cli.ExitOK {
				t.Fatalf("backup -profile %s: %d\n%s%s", name, r.code, r.stdout, r.stderr)
			}
		}
	}
	kept := w.checkKept(t, "backup -profile", nil)

	for range 3 {
		if r := w.run(t, "backup", "-all-profiles", "-profiles-file", w.profiles); r.code != cli.ExitOK {
			t.Fatalf("backup -all-profiles: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	kept = w.checkKept(t, "backup -all-profiles", kept)

	u := startUIWith(t, w.getenv, dashboard, "-all-profiles", "-profiles-file", w.profiles)
	page := u.get(u.addr) // logs in
	if !strings.Contains(page, "s1") {
		t.Fatalf("index:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(u.get(u.base + "r/0/"))
	if csrf == nil {
		t.Fatal("no CSRF token on the dashboard")
	}
	for _, name := range []string{"rel", "home", "slash", "abs"} {
		for i := range 3 {
			res, err := u.c.PostForm(u.base+"r/0/run/backup-"+name+"-"+fmt.Sprint(len(name)), url.Values{"csrf": {csrf[1]}})
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close() // the job's address is all we need
			if res.StatusCode != http.StatusOK {
				t.Fatalf("run backup of %s: %d", name, res.StatusCode)
			}
			events := eventData(t, u.get(res.Request.URL.String()+"/events"))
			if !strings.Contains(events, `class="ok"`) || !strings.Contains(events, "1 snapshots have been removed") {
				t.Errorf("dashboard backup %s, run %d:\n%s", name, i+1, events)
			}
		}
	}
	w.checkKept(t, "the dashboard", kept)
}

// TestDashboardProgressIsTheCLIs: a profile's backup from the dashboard
// reports the progress events the command line writes as -json-progress
// lines for the same backup: the same type, declared once
// (operation.Progress), and the same counts.
func TestDashboardProgressIsTheCLIs(t *testing.T) {
	w := newProfileWorld(t)
	r := w.run(t, "backup", "-profile", "abs", "-profiles-file", w.profiles, "-json-progress")
	if r.code != cli.ExitOK {
		t.Fatalf("backup: %d %s", r.code, r.stderr)
	}
	var cliEvents []operation.Progress
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		var p operation.Progress
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("stderr line %q: %v", line, err)
		}
		cliEvents = append(cliEvents, p)
	}

	var mu sync.Mutex
	var cfg frontend.Config
	capture := func(ctx context.Context, c frontend.Config) (http.Handler, error) {
		mu.Lock()
		defer mu.Unlock()
		cfg = c
		return dashboard(ctx, c)
	}
	startUIWith(t, w.getenv, capture, "-profile", "abs", "-profiles-file", w.profiles)
	mu.Lock()
	backup := cfg.Repos[0].Actions[0]
	mu.Unlock()
	if backup.Name != "backup-abs-3" {
		t.Fatalf("first action %q, want the profile's backup", backup.Name)
	}
	var uiEvents []operation.Progress
	var summary bytes.Buffer
	err := backup.Run(context.Background(), frontend.RunOutput{Log: io.Discard, Summary: &summary,
		Progress: func(p operation.Progress) { uiEvents = append(uiEvents, p) }})
	if err != nil {
		t.Fatalf("dashboard backup: %v\n%s", err, summary.String())
	}

	last := func(events []operation.Progress) operation.Progress {
		for _, p := range events[:len(events)-1] {
			if p.Type != "progress" {
				t.Errorf("event %+v before the last", p)
			}
		}
		p := events[len(events)-1]
		// Timings differ; the file being read is gone by the end of an
		// incremental run; JSON lines carry no unit.
		p.ElapsedSeconds, p.BytesPerSecond, p.ETASeconds, p.Current, p.Unit = 0, 0, 0, "", ""
		if p.FilesTotal == 0 && p.BytesTotal == 0 {
			p.FilesTotal, p.BytesTotal = p.FilesDone, p.BytesDone // the totals' scan may not have ended first
		}
		return p
	}
	if c, u := last(cliEvents), last(uiEvents); c != u || c.Type != "done" || c.Op != "backup" || c.FilesDone != 1 || c.BytesDone != 16000 {
		t.Errorf("last event: command line %+v, dashboard %+v", c, u)
	}
	if !strings.Contains(summary.String(), "No snapshots to remove") {
		t.Errorf("dashboard summary:\n%s", summary.String())
	}
}
