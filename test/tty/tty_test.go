package tty

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// waitLimit bounds every wait for the screen, so a broken build fails
// instead of hanging; nothing is asserted about how long things take.
const waitLimit = 2 * time.Minute

// session is a detached tmux session on a private server socket.
type session struct {
	t      *testing.T
	socket string
}

func newSession(t *testing.T, dir string) *session {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("tmux not installed (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal("tmux is not installed: apt-get install tmux (or set CLOUDSTIC_TEST_NO_SERVERS=1 to skip)")
	}
	s := &session{t: t, socket: filepath.Join(dir, "tmux.sock")}
	s.tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "40", "-c", dir, "env -i PATH=/usr/bin:/bin HOME="+dir+" TERM=xterm PS1='$ ' bash --norc --noprofile")
	t.Cleanup(func() {
		//nolint:errcheck // the server may already be gone
		exec.Command("tmux", "-S", s.socket, "kill-server").Run()
		// The server removes its socket as it exits; wait for that so the
		// temporary directory can be removed.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(s.socket); os.IsNotExist(err) {
				return
			}
		}
	})
	return s
}

func (s *session) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// typeLine types text and Enter into the session.
func (s *session) typeLine(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "t", "-l", text)
	s.tmux("send-keys", "-t", "t", "Enter")
}

// typeSecret types a password at a prompt. The prompt is printed just
// before the program turns echo off; on a loaded machine keys sent at once
// can reach the terminal in that gap, so give the program a moment first.
func (s *session) typeSecret(text string) {
	s.t.Helper()
	time.Sleep(500 * time.Millisecond)
	s.typeLine(text)
}

func (s *session) screen() string {
	s.t.Helper()
	return s.tmux("capture-pane", "-p", "-t", "t")
}

// waitFor polls the screen until re matches, returning the match.
func (s *session) waitFor(re *regexp.Regexp) string {
	s.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		scr := s.screen()
		if m := re.FindString(scr); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %v; it shows:\n%s", re, scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin, err := testbin.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// writeData writes n files of size bytes of random (incompressible) data.
func writeData(t *testing.T, dir string, n, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	for i := range n {
		if _, err := rand.Read(buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.bin", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerminal(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, dir)
	bin := buildBinary(t, dir)
	src := filepath.Join(dir, "src")
	writeData(t, src, 30, 10<<20) // 300 MiB
	const password = "tty-secret-4821"
	s.waitFor(regexp.MustCompile(`(?m)^\$`))

	t.Log("init prompts for the password twice, without echo")
	{
		s.typeLine(bin + " init")
		s.waitFor(regexp.MustCompile(`repository password:`))
		s.typeSecret(password)
		s.waitFor(regexp.MustCompile(`enter the password again:`))
		s.typeSecret(password)
		s.waitFor(regexp.MustCompile(`Created repository [0-9a-f]{8}`))
		if scr := s.screen(); strings.Contains(scr, password) {
			t.Fatalf("the password was echoed:\n%s", scr)
		}
	}

	t.Log("backup draws the progress line, then clears it")
	{
		s.typeLine("clear; " + bin + " backup -source local:" + src)
		s.waitFor(regexp.MustCompile(`repository password:`))
		s.typeSecret(password)
		line := s.waitFor(regexp.MustCompile(`backup \d+:\d\d \d+/30 files [0-9.]+ [KMG]?i?B/300\.0 MiB \d+%  [0-9.]+ [KMG]?i?B/s.*`))
		t.Logf("progress line: %s", line)
		s.waitFor(regexp.MustCompile(`Snapshot [0-9a-f]{8} saved`))
		scr := s.screen()
		if strings.Contains(scr, "B/s") || strings.Contains(scr, password) {
			t.Fatalf("the progress line (or the password) is still on screen:\n%s", scr)
		}
		if !strings.Contains(scr, "Files:       30 new") {
			t.Fatalf("no summary:\n%s", scr)
		}
	}

	t.Log("backup -quiet draws no progress")
	{
		log := filepath.Join(dir, "pane.log")
		s.tmux("pipe-pane", "-t", "t", "-o", "cat > "+log)
		s.typeLine("clear; CLOUDSTIC_PASSWORD=" + password + " " + bin + " backup -quiet -source local:" + src + "; echo exit=$?")
		s.waitFor(regexp.MustCompile(`exit=0`))
		s.tmux("pipe-pane", "-t", "t") // stop logging
		out, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "\x1b[2K") || strings.Contains(string(out), "ETA") {
			t.Fatalf("progress drawn with -quiet: %q", out)
		}
	}
}
