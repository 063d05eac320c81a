package config

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/chacha20poly1305"
)

// config-token:// secrets live in <config-dir>/tokens/PROVIDER/NAME.enc,
// sealed with XChaCha20-Poly1305 under a random key in
// <config-dir>/tokens/token.key (0600). The sealing keeps a token file that
// leaks on its own (copied into a backup, a dotfiles repository, a support
// ticket) useless; it does not protect against someone who can read the
// whole config directory, which the 0600/0700 modes are for.

const tokenMagic = "cloudstic-token-v1\n"

// ErrTokenCorrupt marks a token file that does not decrypt with the key.
var ErrTokenCorrupt = errors.New("config token does not decrypt (corrupt, or sealed with another token.key)")

func tokenPaths(dir, provider, name string) (key, file string) {
	return filepath.Join(dir, "tokens", "token.key"), filepath.Join(dir, "tokens", provider, name+".enc")
}

func readToken(ctx context.Context, dir, provider, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	ref := "config-token://" + provider + "/" + name
	keyPath, path := tokenPaths(dir, provider, name)
	sealed, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w (no %s; store it with 'cloudstic secret set %s')", ref, ErrSecretNotFound, path, ref)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return "", fmt.Errorf("%s: reading the token key: %w", ref, err)
	}
	rest, ok := bytes.CutPrefix(sealed, []byte(tokenMagic))
	if !ok || len(key) != chacha20poly1305.KeySize || len(rest) < chacha20poly1305.NonceSizeX {
		return "", fmt.Errorf("%s: %w", ref, ErrTokenCorrupt)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	nonce, ct := rest[:chacha20poly1305.NonceSizeX], rest[chacha20poly1305.NonceSizeX:]
	plain, err := aead.Open(nil, nonce, ct, []byte(provider+"/"+name))
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, ErrTokenCorrupt)
	}
	return string(plain), nil
}

func writeToken(dir, provider, name, secret string) error {
	keyPath, path := tokenPaths(dir, provider, name)
	key, err := os.ReadFile(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, chacha20poly1305.KeySize)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		if err := WriteFileAtomic(keyPath, key); err != nil {
			return fmt.Errorf("writing the token key: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("reading the token key: %w", err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return fmt.Errorf("token key %s: %w", keyPath, err)
	}
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	out := append([]byte(tokenMagic), nonce...)
	out = aead.Seal(out, nonce, []byte(secret), []byte(provider+"/"+name))
	return WriteFileAtomic(path, out)
}
