//go:build unix

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// startKeyring starts a private D-Bus session bus and an unlocked
// gnome-keyring-daemon on it (the Secret Service of a Linux desktop) and
// returns the environment that reaches them. Both are stopped when the
// test ends.
func startKeyring(t *testing.T, home string) []string {
	t.Helper()
	for _, bin := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found (scripts/test.sh installs the dbus and gnome-keyring packages): %v", bin, err)
		}
	}
	runtimeDir := filepath.Join(home, "run")
	if err := os.MkdirAll(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Process.Kill(); _ = bus.Wait() }) // stopping our own daemon; its exit status is not news
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the bus address: %v", err)
	}
	addr = strings.TrimSpace(addr)
	env := []string{"DBUS_SESSION_BUS_ADDRESS=" + addr, "HOME=" + home, "XDG_RUNTIME_DIR=" + runtimeDir,
		"XDG_DATA_HOME=" + filepath.Join(home, "data")}

	// --unlock reads the login keyring's password from stdin, creating
	// the keyring with it: no prompt, no desktop.
	kr := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	kr.Env = append(os.Environ(), env...)
	kr.Stdin = strings.NewReader("keyring-login-pass")
	kr.Stdout, kr.Stderr = os.Stderr, os.Stderr
	if err := kr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kr.Process.Kill(); _ = kr.Wait() }) // as above
	waitForName(t, addr, "org.freedesktop.secrets")
	return env
}

// waitForName waits until a D-Bus name has an owner on the bus.
func waitForName(t *testing.T, addr, name string) {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the test bus: %v", err)
	}
	defer func() { _ = conn.Close() }() // a test connection; nothing to report
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var has bool
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err == nil && has {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not appear on the test bus", name)
		case <-tick.C:
		}
	}
}

// TestSecretServicePassword stores a repository password in a real
// gnome-keyring over D-Bus and runs a backup whose profile reads it with
// secret-service://.
func TestSecretServicePassword(t *testing.T) {
	p := newProfileEnv(t)
	p.env = append(p.env, startKeyring(t, p.dir)...)
	src := writeSource(t, filepath.Join(p.dir, "src"), map[string]string{"f.txt": "keyring"})
	yaml := fmt.Sprintf(`version: 1
stores:
  home:
    uri: local:%s
    password_secret: secret-service://cloudstic/home-repo
profiles:
  docs:
    source: local:%s
    store: home
`, filepath.Join(p.dir, "repo"), src)
	if err := os.MkdirAll(p.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.cfg, "profiles.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	// Before the secret exists: not found, by name.
	res := p.run(t, "store", "init", "-yes", "home")
	wantCode(t, res, 1)
	wantOneLineError(t, res, "secret-service://cloudstic/home-repo", "secret not found")

	if res := p.runStdin(t, "keyring-repo-pass\n", "secret", "set", "secret-service://cloudstic/home-repo"); res.code != 0 {
		t.Fatalf("secret set: %v", res)
	}
	p.mustRun(t, "store", "init", "-yes", "home")
	res = p.mustRun(t, "backup", "-profile", "docs", "-json")
	var out struct {
		SnapshotID string `json:"snapshot_id"`
	}
	decodeJSON(t, res, &out)
	if out.SnapshotID == "" {
		t.Fatalf("no snapshot: %v", res)
	}
	// The same password, given another way, opens the repository: the
	// keyring held what was stored.
	p.env = append(p.env, "PW=keyring-repo-pass")
	p.mustRun(t, "list", "-store", "local:"+filepath.Join(p.dir, "repo"), "-password-ref", "env://PW")

	// Without a session bus, a clear error.
	p.env = append(p.env, "DBUS_SESSION_BUS_ADDRESS=")
	res = p.run(t, "backup", "-profile", "docs")
	wantCode(t, res, 1)
	wantOneLineError(t, res, "no D-Bus session bus")
}
