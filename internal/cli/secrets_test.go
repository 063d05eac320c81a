package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes: with -debug,
// store requests are logged from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// mainLocked is mainWith with goroutine-safe output buffers.
func mainLocked(env map[string]string, args ...string) outcome {
	var stdout, stderr lockedBuffer
	code := cli.Main(context.Background(), args, cli.IO{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
	})
	return outcome{stdout.buf.String(), stderr.buf.String(), code}
}

// TestSecretsNeverPrinted runs every command that takes a credential with
// -debug, -verbose and -json, right and wrong: no password or key appears
// on stdout or stderr, in errors included.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const (
		pw       = "hunter2-Pa55-secret"
		wrong    = "wrong-Pa55-guess"
		newPW    = "brand-new-Pa55-secret"
		platform = "c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ffee1234"
	)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f.txt"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	storeArg := "local:" + filepath.Join(dir, "store")
	env := map[string]string{"CLOUDSTIC_STORE": storeArg}
	runs := [][]string{
		{"init", "-debug", "-password", pw},
		{"backup", "-debug", "-verbose", "-password", pw, "-source", "local:" + src},
		{"backup", "-debug", "-json", "-password", pw, "-source", "local:" + src},
		{"list", "-debug", "-password", pw},
		{"list", "-debug", "-json", "-password", wrong},
		{"list", "-debug", "-password", wrong},
		{"list", "-encryption-key", platform},
		{"ls", "-debug", "-password", pw, "latest"},
		{"cat", "-debug", "-password", pw, "config"},
		{"restore", "-debug", "-password", pw, "-output", filepath.Join(dir, "out")},
		{"check", "-debug", "-read-data", "-password", pw},
		{"key", "list", "-debug", "-password", pw},
		{"key", "add", "-debug", "-password", pw, "-new-encryption-key", platform},
		{"key", "passwd", "-debug", "-password", pw, "-new-password", newPW},
		{"key", "list", "-debug", "-json", "-password", newPW},
		{"key", "passwd", "-debug", "-password", wrong, "-new-password", newPW + "x"},
		{"locks", "-debug", "-password", newPW},
	}
	for _, args := range runs {
		o := mainLocked(env, args...)
		for _, secret := range []string{pw, wrong, newPW, platform, strings.ToUpper(platform)} {
			if strings.Contains(o.stdout, secret) || strings.Contains(o.stderr, secret) {
				t.Errorf("%q printed a secret:\nstdout: %s\nstderr: %s", args, o.stdout, o.stderr)
			}
		}
	}
	// Passwords from the environment are not printed by -h either.
	o := mainLocked(map[string]string{"CLOUDSTIC_PASSWORD": pw, "CLOUDSTIC_ENCRYPTION_KEY": platform}, "backup", "-h")
	if strings.Contains(o.stdout+o.stderr, pw) || strings.Contains(o.stdout+o.stderr, platform) {
		t.Errorf("backup -h printed a secret from the environment:\n%s%s", o.stdout, o.stderr)
	}
}
