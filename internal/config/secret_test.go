package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	good := filepath.Join(dir, "good.pw")
	open := filepath.Join(dir, "open.pw")
	if err := os.WriteFile(good, []byte("file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(open, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PW": "env-secret"}
	r := &Resolver{Getenv: func(k string) string { return env[k] }, ConfigDir: dir, GOOS: "linux"}
	if err := r.Store(ctx, "config-token://cloudstic/nas", "token-secret"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref, want string
		err       error
	}{
		{"env://PW", "env-secret", nil},
		{"env://NOPE", "", ErrSecretNotFound},
		{"file://" + good, "file-secret", nil},
		{"file://" + open, "", ErrInsecureFile},
		{"file://" + filepath.Join(dir, "none"), "", ErrSecretNotFound},
		{"file://relative/x", "", ErrBadRef},
		{"config-token://cloudstic/nas", "token-secret", nil},
		{"config-token://cloudstic/other", "", ErrSecretNotFound},
		{"keychain://svc/acct", "", ErrSecretUnavailable},
		{"wincred://target", "", ErrSecretUnavailable},
		{"secret-service://cloudstic/pw", "", ErrSecretUnavailable}, // no session bus in env
		{"vault://x", "", ErrBadRef},
		{"plain", "", ErrBadRef},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := r.Resolve(ctx, tc.ref)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("Resolve = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	// The token is sealed at rest, and a tampered file is refused.
	path := filepath.Join(dir, "tokens", "cloudstic", "nas.enc")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == "token-secret" || contains(b, "token-secret") {
		t.Error("config token stored in the clear")
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(ctx, "config-token://cloudstic/nas"); !errors.Is(err, ErrTokenCorrupt) {
		t.Errorf("tampered token: %v", err)
	}
}

func contains(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return true
		}
	}
	return false
}

// fakeKeyring stands in for the D-Bus Secret Service only in this unit
// test of the mapping; the real service is tested in internal/cli.
type fakeKeyring map[string]string

func (k fakeKeyring) Get(s, a string) (string, error) {
	v, ok := k[s+"/"+a]
	if !ok {
		return "", ErrSecretNotFound
	}
	return v, nil
}
func (k fakeKeyring) Set(s, a, v string) error { k[s+"/"+a] = v; return nil }

func TestKeyringMapping(t *testing.T) {
	kr := fakeKeyring{"cloudstic/pw": "kr-secret"}
	env := map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}
	r := &Resolver{Getenv: func(k string) string { return env[k] }, Keyring: kr, GOOS: "linux"}
	ctx := context.Background()
	if v, err := r.Resolve(ctx, "secret-service://cloudstic/pw"); err != nil || v != "kr-secret" {
		t.Errorf("got %q, %v", v, err)
	}
	if _, err := r.Resolve(ctx, "secret-service://cloudstic/none"); !errors.Is(err, ErrSecretNotFound) {
		t.Errorf("missing item: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Store(cancelled, "secret-service://cloudstic/pw", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled store: %v", err)
	}
}
