package tty

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// await polls the screen until re matches, with a deadline rather than
// a sleep, and returns the screen that matched.
func (s *session) await(re *regexp.Regexp) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		scr := s.screen()
		if re.MatchString(scr) {
			return scr
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("screen never showed %v; it shows:\n%s", re, scr)
		case <-tick.C:
		}
	}
}

// key sends one key (a tmux key name) to the session.
func (s *session) key(k string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "t", k)
}

// TestTUI drives `cloudstic tui` in a real terminal: the profile list, b
// on an uninitialized store offering init, a backup with its progress and
// then its snapshot, a clean check, the layout at 80x24, and q leaving
// the terminal as it found it (no alternate screen, the cursor shown).
func TestTUI(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil && os.Getenv("CI") == "true" {
		t.Fatal("tmux is not installed, and CI must run this test: scripts/test.sh installs it (apt-get install tmux)")
	}
	dir := t.TempDir()
	s := newSession(t, dir)
	bin := buildBinary(t, dir)
	src := filepath.Join(dir, "src")
	writeData(t, src, 15, 10<<20) // 150 MiB: the backup runs long enough to be seen
	profiles := filepath.Join(dir, "profiles.yaml")
	yaml := "version: 1\nstores:\n  nas: {uri: \"local:" + filepath.Join(dir, "repo") + "\", password_secret: \"env://TUI_PW\"}\n" +
		"profiles:\n  docs: {source: \"local:" + src + "\", store: nas, keep_last: 3}\n"
	if err := os.WriteFile(profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s.await(regexp.MustCompile(`(?m)^\$`))
	s.typeLine("TUI_PW=tui-secret-1 " + bin + " tui -profiles-file " + profiles)

	t.Log("the profile list appears, the store not initialized")
	s.await(regexp.MustCompile(`(?m)^PROFILES`))
	s.await(regexp.MustCompile(`> docs +✗ not initialized`))

	t.Log("b offers init, y creates the repository")
	s.key("b")
	s.await(regexp.MustCompile(`No repository in the store\. Initialize it now \(init\)\? \[y/N\]`))
	s.key("y")
	s.await(regexp.MustCompile(`> docs +✓ ready`))

	t.Log("b backs up: progress while it runs, then the new snapshot")
	s.key("b")
	s.await(regexp.MustCompile(`Running backup docs`))
	scr := s.await(regexp.MustCompile(`Last run: backup docs done`))
	if !regexp.MustCompile(`100% 15/15 files`).MatchString(scr) {
		t.Errorf("the finished backup's progress bar is not full:\n%s", scr)
	}
	scr = s.await(regexp.MustCompile(`Latest +[0-9a-f]{8} `))
	id := regexp.MustCompile(`Latest +([0-9a-f]{8}) `).FindStringSubmatch(scr)[1]
	if !strings.Contains(scr, "Snapshot "+id+" saved") {
		t.Errorf("the latest snapshot %s is not the one the backup saved:\n%s", id, scr)
	}

	t.Log("c checks: clean")
	s.key("c")
	s.await(regexp.MustCompile(`check docs: done`))
	s.await(regexp.MustCompile(`No errors found`))

	t.Log("at 80x24 the layout stays readable")
	s.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
	// Drawn anew for the new size: the title on top, the keys at the bottom.
	scr = s.await(regexp.MustCompile(`\Acloudstic tui — (?s:.*)\n↑/↓ j/k select .* q quit\s*\z`))
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines on a 24-line terminal", len(lines))
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns on an 80-column terminal: %q", n, l)
		}
	}
	for _, want := range []string{"PROFILES", "> docs", "Store   nas", "Latest  " + id, "Locks   none", "ACTIVITY"} {
		if !strings.Contains(scr, want) {
			t.Errorf("at 80x24 the screen lacks %q:\n%s", want, scr)
		}
	}
	t.Logf("the screen at 80x24:\n%s", scr)

	t.Log("q quits and restores the terminal")
	s.key("q")
	s.await(regexp.MustCompile(`(?m)^\$ *$`))
	if got := strings.TrimSpace(s.tmux("display", "-p", "-t", "t", "#{alternate_on} #{cursor_flag}")); got != "0 1" {
		t.Errorf("after q: alternate_on cursor_flag = %q, want \"0 1\"", got)
	}
}
