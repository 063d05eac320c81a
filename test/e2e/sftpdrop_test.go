//go:build unix

package e2e

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSFTPConnectionDropped cuts the SSH connection of a running backup by
// killing the server process that serves it (not the listener, and no other
// client's session). The backup must either reconnect and finish or fail
// with one clear line; either way the next backup succeeds and
// check -read-data passes.
func TestSFTPConnectionDropped(t *testing.T) {
	if _, err := exec.LookPath("ss"); err != nil {
		t.Fatalf("ss (Debian iproute2) is needed to find the connection to cut: %v", err)
	}
	r := newRepo(t, storeKind{"sftp", sftpStore})
	port := os.Getenv("SFTP_TEST_PORT")
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4<<20)
	for i := range 24 { // 96 MiB of incompressible data: a few seconds over SFTP
		if _, err := rand.Read(buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d", i)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c := runOpts{}.cmd(r.with("backup", "-source", "local:"+src))
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()

	// The repository's directory on this machine (the server is local):
	// "sftp://user@host:port" + absolute path.
	storeURL := r[1]
	repoDir := storeURL[strings.Index(storeURL, ":"+port+"/")+len(port)+1:]
	killed := cutConnection(t, c.Process.Pid, port, repoDir, done)
	err := <-done
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed sshd %v; backup exit %d\nstdout: %s\nstderr: %s", killed, code, stdout.String(), stderr.String())
	switch code {
	case 0: // reconnected and finished
	case 1:
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 {
			t.Errorf("a failed backup should say why in one line, got %d lines", len(lines))
		}
	default:
		t.Fatalf("backup after a dropped connection exited %d", code)
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Fatal("panic after a dropped connection")
	}
	// A failed run's lock is released, or at worst expires: wait for it.
	mustRun(t, r.with("backup", "-source", "local:"+src, "-lock-wait", "2m")...)
	mustRun(t, r.with("check", "-read-data")...)
}

// usersPids extracts the pids of an `ss -p` line's users:(...) field.
var usersPids = regexp.MustCompile(`pid=(\d+)`)

// cutConnection waits until the backup process pid has an established
// connection to the SFTP port and has stored its first pack in repoDir,
// then SIGKILLs the sshd processes holding the server side of exactly that
// connection.
func cutConnection(t *testing.T, pid int, port, repoDir string, done <-chan error) []int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	clientRe := regexp.MustCompile(`\s127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:` + regexp.QuoteMeta(port) + `\s.*pid=` + strconv.Itoa(pid) + `,`)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("backup finished (%v) before its connection could be cut; give it more data", err)
		case <-time.After(50 * time.Millisecond): // often enough to catch a backup of a few seconds mid-way
		}
		out, err := exec.Command("ss", "-tnpH", "state", "established").Output()
		if err != nil {
			t.Fatalf("ss: %v", err)
		}
		m := clientRe.FindStringSubmatch(string(out))
		if m == nil {
			continue
		}
		// The server side of that connection: local port `port`, peer our
		// client port.
		serverRe := regexp.MustCompile(`\s127\.0\.0\.1:` + regexp.QuoteMeta(port) + `\s+127\.0\.0\.1:` + m[1] + `\s.*`)
		line := serverRe.FindString(string(out))
		var pids []int
		for _, pm := range usersPids.FindAllStringSubmatch(line, -1) {
			p, _ := strconv.Atoi(pm[1]) // the regexp matched digits
			pids = append(pids, p)
		}
		if len(pids) == 0 {
			continue
		}
		// Cut it mid-backup: once the first pack is stored, while more
		// are still to come.
		if packs, _ := filepath.Glob(filepath.Join(repoDir, "data", "*", "*")); len(packs) == 0 { // a fixed, valid pattern
			continue
		}
		for _, p := range pids {
			if err := syscall.Kill(p, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				t.Fatalf("kill sshd %d: %v", p, err)
			}
		}
		return pids
	}
	t.Fatal("never saw the backup's SFTP connection")
	return nil
}
