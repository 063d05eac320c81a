package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"golang.org/x/crypto/hkdf"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// MasterSize is the size of the master secret.
const MasterSize = 32

// Overhead is what Seal adds to a plaintext: nonce plus GCM tag.
const Overhead = nonceSize + 16

const nonceSize = 12

// ErrAuth means a ciphertext failed authentication: wrong key, or the
// stored object was damaged or tampered with.
var ErrAuth = errors.New("authentication failed (wrong key or damaged data)")

// ErrNoConfigKey means a config MAC was asked of an unencrypted key.
var ErrNoConfigKey = errors.New("an unencrypted repository has no key to authenticate its config")

// Key seals and opens objects and computes blob ids. A nil AEAD means an
// unencrypted repository. Key is safe for concurrent use.
type Key struct {
	aead       cipher.AEAD
	macKey     []byte
	chunkerKey []byte
	// configKey authenticates the repository's plaintext config, so that
	// a store writer without the master secret cannot change it.
	configKey []byte
	macPool   sync.Pool
}

// NewMaster returns a fresh random master secret.
func NewMaster() ([]byte, error) {
	m := make([]byte, MasterSize)
	if _, err := rand.Read(m); err != nil {
		return nil, err
	}
	return m, nil
}

func derive(master []byte, label string) []byte {
	out := make([]byte, 32)
	r := hkdf.New(sha256.New, master, nil, []byte("cloudstic "+label))
	if _, err := io.ReadFull(r, out); err != nil {
		panic(err) // cannot happen: HKDF yields up to 255*32 bytes
	}
	return out
}

// FromMaster derives the working key of an encrypted repository.
func FromMaster(master []byte) (*Key, error) {
	if len(master) != MasterSize {
		return nil, fmt.Errorf("master key has %d bytes, want %d", len(master), MasterSize)
	}
	aead, err := newAEAD(derive(master, "aead"))
	if err != nil {
		return nil, err
	}
	k := &Key{aead: aead, macKey: derive(master, "blob-id"), chunkerKey: derive(master, "chunker"),
		configKey: derive(master, "config")}
	k.macPool.New = func() any { return hmac.New(sha256.New, k.macKey) }
	return k, nil
}

// Unencrypted returns the key of an unencrypted repository; chunkerKey is
// stored in its config.
func Unencrypted(chunkerKey []byte) *Key {
	return &Key{chunkerKey: append([]byte(nil), chunkerKey...)}
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Encrypted reports whether the key seals objects.
func (k *Key) Encrypted() bool { return k.aead != nil }

// ChunkerKey returns the secret that keys the chunker's gear table.
func (k *Key) ChunkerKey() []byte { return k.chunkerKey }

// ID returns the id of a blob's plaintext: HMAC-SHA256 with the repository's
// MAC key, or plain SHA-256 when unencrypted.
func (k *Key) ID(data []byte) id.ID {
	if k.aead == nil {
		return sha256.Sum256(data)
	}
	h := k.macPool.Get().(hash.Hash)
	h.Reset()
	h.Write(data)
	var out id.ID
	h.Sum(out[:0])
	k.macPool.Put(h)
	return out
}

// ConfigMAC returns HMAC-SHA256 of msg (a config's canonical form) under
// the key derived as "cloudstic config". An unencrypted key has no secret
// to bind a config with: it returns ErrNoConfigKey.
func (k *Key) ConfigMAC(msg []byte) ([]byte, error) {
	if k.aead == nil {
		return nil, ErrNoConfigKey
	}
	h := hmac.New(sha256.New, k.configKey)
	h.Write(msg)
	return h.Sum(nil), nil
}

// VerifyConfigMAC reports whether mac is msg's ConfigMAC, in constant time.
func (k *Key) VerifyConfigMAC(msg, mac []byte) bool {
	want, err := k.ConfigMAC(msg)
	return err == nil && hmac.Equal(want, mac)
}

// Seal appends the sealed form of plaintext to dst: a random nonce, then
// the AES-256-GCM ciphertext and tag. Unencrypted keys append plaintext.
func (k *Key) Seal(dst, plaintext []byte) ([]byte, error) {
	if k.aead == nil {
		return append(dst, plaintext...), nil
	}
	start := len(dst)
	dst = append(dst, make([]byte, nonceSize)...)
	if _, err := rand.Read(dst[start:]); err != nil {
		return nil, err
	}
	return k.aead.Seal(dst, dst[start:start+nonceSize], plaintext, nil), nil
}

// Open verifies and decrypts a sealed object, appending the plaintext to dst.
func (k *Key) Open(dst, sealed []byte) ([]byte, error) {
	if k.aead == nil {
		return append(dst, sealed...), nil
	}
	if len(sealed) < Overhead {
		return nil, fmt.Errorf("%w: object of %d bytes is shorter than the seal overhead", ErrAuth, len(sealed))
	}
	out, err := k.aead.Open(dst, sealed[:nonceSize], sealed[nonceSize:], nil)
	if err != nil {
		return nil, ErrAuth
	}
	return out, nil
}

// OpenInPlace verifies and decrypts a sealed object in its own memory,
// which it overwrites (after a failure too), and returns the plaintext.
func (k *Key) OpenInPlace(sealed []byte) ([]byte, error) {
	if k.aead == nil {
		return sealed, nil
	}
	if len(sealed) < Overhead {
		return nil, fmt.Errorf("%w: object of %d bytes is shorter than the seal overhead", ErrAuth, len(sealed))
	}
	ct := sealed[nonceSize:]
	out, err := k.aead.Open(ct[:0], sealed[:nonceSize], ct, nil)
	if err != nil {
		return nil, ErrAuth
	}
	return out, nil
}

// SealedSize returns the stored size of a plaintext of n bytes.
func (k *Key) SealedSize(n int) int {
	if k.aead == nil {
		return n
	}
	return n + Overhead
}
