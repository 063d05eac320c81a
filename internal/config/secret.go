package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Sentinel errors of secret resolution.
var (
	// ErrBadRef is a reference that does not parse or names an unknown scheme.
	ErrBadRef = errors.New("bad secret reference")
	// ErrSecretNotFound means the backend answered and has no such secret.
	ErrSecretNotFound = errors.New("secret not found")
	// ErrSecretUnavailable means the backend cannot be reached or does not
	// exist on this platform.
	ErrSecretUnavailable = errors.New("secret backend unavailable")
	// ErrInsecureFile is a file:// secret other users may read.
	ErrInsecureFile = errors.New("secret file is accessible by other users")
)

// Schemes of secret references.
const (
	SchemeEnv           = "env"
	SchemeFile          = "file"
	SchemeConfigToken   = "config-token"
	SchemeSecretService = "secret-service"
	SchemeKeychain      = "keychain"
	SchemeWincred       = "wincred"
)

// Ref is a parsed secret reference, SCHEME://PATH.
type Ref struct {
	Raw    string
	Scheme string
	Path   string
}

// ParseRef parses a secret reference and checks its shape.
func ParseRef(s string) (Ref, error) {
	scheme, path, ok := strings.Cut(s, "://")
	if !ok {
		return Ref{}, fmt.Errorf("%w %q: want SCHEME://..., e.g. env://VAR or file:///path", ErrBadRef, s)
	}
	r := Ref{Raw: s, Scheme: scheme, Path: path}
	switch scheme {
	case SchemeEnv, SchemeWincred:
		if path == "" || strings.Contains(path, "/") {
			return r, fmt.Errorf("%w %q: want %s://NAME", ErrBadRef, s, scheme)
		}
	case SchemeFile:
		if !strings.HasPrefix(path, "/") {
			return r, fmt.Errorf("%w %q: want file:///absolute/path", ErrBadRef, s)
		}
	case SchemeConfigToken, SchemeSecretService, SchemeKeychain:
		a, b, ok := strings.Cut(path, "/")
		if !ok || a == "" || b == "" || strings.Contains(b, "/") || !ValidName(a) || !ValidName(b) {
			return r, fmt.Errorf("%w %q: want %s://%s", ErrBadRef, s, scheme, refShape[scheme])
		}
	default:
		return r, fmt.Errorf("%w %q: unknown scheme %q (want env, file, config-token, secret-service, keychain or wincred)", ErrBadRef, s, scheme)
	}
	return r, nil
}

var refShape = map[string]string{
	SchemeConfigToken:   "PROVIDER/NAME",
	SchemeSecretService: "COLLECTION/ITEM",
	SchemeKeychain:      "SERVICE/ACCOUNT",
}

// Keyring is the platform keyring (the Secret Service on Linux): items
// addressed by a service and an account name.
type Keyring interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
}

// Resolver reads the secrets references point to.
type Resolver struct {
	// Getenv reads environment variables (env:// and the D-Bus address).
	Getenv func(string) string
	// ConfigDir holds config-token:// secrets.
	ConfigDir string
	// Keyring serves secret-service://, keychain:// and wincred://; nil
	// means the platform's (see SystemKeyring).
	Keyring Keyring
	// GOOS is the platform the keyring schemes are checked against; empty
	// means runtime.GOOS.
	GOOS string
}

// Resolve returns the secret ref points to. Errors match ErrBadRef,
// ErrSecretNotFound, ErrSecretUnavailable or ErrInsecureFile and name the
// reference, never the secret.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	p, err := ParseRef(ref)
	if err != nil {
		return "", err
	}
	switch p.Scheme {
	case SchemeEnv:
		v := r.Getenv(p.Path)
		if v == "" {
			return "", fmt.Errorf("%s: %w: environment variable %s is unset or empty", ref, ErrSecretNotFound, p.Path)
		}
		return v, nil
	case SchemeFile:
		return readSecretFile(p)
	case SchemeConfigToken:
		provider, name, _ := strings.Cut(p.Path, "/")
		return readToken(ctx, r.ConfigDir, provider, name)
	}
	service, account, err := r.keyringAddress(p)
	if err != nil {
		return "", err
	}
	return r.keyringGet(ctx, p, service, account)
}

// keyringAddress maps a keyring reference to a service and account, and
// refuses schemes of other platforms.
func (r *Resolver) keyringAddress(p Ref) (string, string, error) {
	goos := r.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	want := map[string]string{SchemeSecretService: "linux", SchemeKeychain: "darwin", SchemeWincred: "windows"}[p.Scheme]
	if goos != want {
		return "", "", fmt.Errorf("%s: %w: %s:// is the %s keyring; on %s use env://, file://, config-token://%s",
			p.Raw, ErrSecretUnavailable, p.Scheme, platformName[want], goos, nativeHint[goos])
	}
	if p.Scheme == SchemeSecretService && r.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return "", "", fmt.Errorf("%s: %w: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset); on a headless host use env:// or file://",
			p.Raw, ErrSecretUnavailable)
	}
	if p.Scheme == SchemeWincred {
		// The Windows keyring stores SERVICE:ACCOUNT targets.
		service, account, ok := strings.Cut(p.Path, ":")
		if !ok {
			return "", "", fmt.Errorf("%w %q: want wincred://SERVICE:ACCOUNT", ErrBadRef, p.Raw)
		}
		return service, account, nil
	}
	service, account, _ := strings.Cut(p.Path, "/")
	return service, account, nil
}

var platformName = map[string]string{"linux": "Linux desktop", "darwin": "macOS", "windows": "Windows"}

var nativeHint = map[string]string{"linux": " or secret-service://", "darwin": " or keychain://", "windows": " or wincred://"}

// keyringGet reads one keyring item, giving up when ctx ends (a keyring
// daemon may wait for a user to unlock it).
func (r *Resolver) keyringGet(ctx context.Context, p Ref, service, account string) (string, error) {
	kr := r.Keyring
	if kr == nil {
		kr = SystemKeyring{}
	}
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := kr.Get(service, account)
		done <- result{v, err}
	}()
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("%s: %w", p.Raw, context.Cause(ctx))
	case res := <-done:
		switch {
		case errors.Is(res.err, ErrSecretNotFound):
			return "", fmt.Errorf("%s: %w in the %s keyring", p.Raw, ErrSecretNotFound, p.Scheme)
		case res.err != nil:
			return "", fmt.Errorf("%s: %w: %w", p.Raw, ErrSecretUnavailable, res.err)
		}
		return res.v, nil
	}
}

// Store saves a secret where ref points (config-token://, file:// and the
// keyring schemes; env:// cannot be written).
func (r *Resolver) Store(ctx context.Context, ref, secret string) error {
	p, err := ParseRef(ref)
	if err != nil {
		return err
	}
	switch p.Scheme {
	case SchemeEnv:
		return fmt.Errorf("%s: %w: env:// secrets are set in the environment, not stored", ref, ErrBadRef)
	case SchemeFile:
		return WriteFileAtomic(p.Path, []byte(secret))
	case SchemeConfigToken:
		provider, name, _ := strings.Cut(p.Path, "/")
		return writeToken(r.ConfigDir, provider, name, secret)
	}
	service, account, err := r.keyringAddress(p)
	if err != nil {
		return err
	}
	kr := r.Keyring
	if kr == nil {
		kr = SystemKeyring{}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := kr.Set(service, account, secret); err != nil {
		return fmt.Errorf("%s: %w: %w", ref, ErrSecretUnavailable, err)
	}
	return nil
}

// readSecretFile reads a file:// secret, refusing files others may access
// (as ssh does with private keys). One trailing newline is dropped, as
// restic does with -password-file.
func readSecretFile(p Ref) (string, error) {
	fi, err := os.Stat(p.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w: %w", p.Raw, ErrSecretNotFound, err)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.Raw, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: %w (mode %04o): run chmod 600 %s", p.Raw, ErrInsecureFile, fi.Mode().Perm(), p.Path)
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p.Raw, err)
	}
	return TrimNewline(string(b)), nil
}

// TrimNewline drops one trailing "\n" or "\r\n".
func TrimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}
