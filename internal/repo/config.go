package repo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/store"
)

// FormatVersion is the repository format this program reads and writes.
const FormatVersion = 1

// ConfigKey is where the plaintext config lives.
const ConfigKey = "config"

// Sentinel errors of opening and creating repositories.
var (
	// ErrNotRepository means the store has no config object.
	ErrNotRepository = errors.New("not a cloudstic repository")
	// ErrAlreadyInitialized means init found an existing config.
	ErrAlreadyInitialized = errors.New("repository already initialized")
	// ErrUnsupportedVersion means the config names a format we do not know.
	ErrUnsupportedVersion = errors.New("unsupported repository format version")
	// ErrCorruptConfig means the config object could not be parsed.
	ErrCorruptConfig = errors.New("corrupt repository config")
	// ErrNeedCredential means the repository is encrypted and no password
	// or key was given.
	ErrNeedCredential = errors.New("repository is encrypted: a password or key is required")
	// ErrWrongCredential means no key slot opened with the given credential.
	ErrWrongCredential = crypt.ErrWrongCredential
	// ErrConfigTampered means an encrypted repository's config does not
	// match its MAC: someone without the key changed it.
	ErrConfigTampered = errors.New("repository config fails authentication: it was changed by someone without the key")
	// ErrDowngrade means a config says the repository is unencrypted
	// where there is evidence that it is encrypted (a credential was
	// given, key slots exist, this host opened it encrypted before): a
	// store writer may have switched encryption off to read what is
	// backed up next.
	ErrDowngrade = errors.New("refusing a repository config that says it is not encrypted (encryption may have been switched off by tampering)")
)

// ChunkerParams are the content-defined chunking bounds, in bytes.
type ChunkerParams struct {
	Min int `json:"min"`
	Avg int `json:"avg"`
	Max int `json:"max"`
}

// Config is the plaintext description of a repository.
type Config struct {
	Version    int           `json:"version"`
	ID         string        `json:"id"`
	Created    time.Time     `json:"created"`
	Encrypted  bool          `json:"encrypted"`
	Chunker    ChunkerParams `json:"chunker"`
	PackSize   int           `json:"pack_size"`
	ChunkerKey string        `json:"chunker_key,omitempty"` // unencrypted repositories only
	// MAC (encrypted repositories) binds every other field to the master
	// key: hex HMAC-SHA256 of macInput under the key derived as
	// "cloudstic config". Configs written before it existed have none
	// (see Repository.ConfigAuthenticated).
	MAC string `json:"mac,omitempty"`
}

// macInput is the canonical form of c that its MAC covers: every field
// but the MAC, in a fixed order and encoding, so that the MAC does not
// depend on how a JSON encoder spaced or ordered the stored object.
func (c Config) macInput() []byte {
	return fmt.Appendf(nil, "cloudstic config\x00version=%d\x00id=%s\x00created=%s\x00encrypted=%t\x00chunker=%d,%d,%d\x00pack_size=%d\x00chunker_key=%s",
		c.Version, c.ID, c.Created.UTC().Format(time.RFC3339Nano), c.Encrypted,
		c.Chunker.Min, c.Chunker.Avg, c.Chunker.Max, c.PackSize, c.ChunkerKey)
}

// sign sets c's MAC under key.
func (c *Config) sign(key *crypt.Key) error {
	mac, err := key.ConfigMAC(c.macInput())
	if err != nil {
		return err
	}
	c.MAC = hex.EncodeToString(mac)
	return nil
}

// verify checks c's MAC under key. A config without a MAC (written
// before configs had one) passes: authenticated reports whether it had
// one.
func (c Config) verify(key *crypt.Key) (authenticated bool, err error) {
	if c.MAC == "" {
		return false, nil
	}
	mac, err := hex.DecodeString(c.MAC)
	if err != nil || !key.VerifyConfigMAC(c.macInput(), mac) {
		return false, ErrConfigTampered
	}
	return true, nil
}

// encode returns the config as stored.
func (c Config) encode() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }

func defaultConfig(encrypted bool, now time.Time) (Config, error) {
	rid := make([]byte, 16)
	if _, err := rand.Read(rid); err != nil {
		return Config{}, err
	}
	return Config{
		Version:   FormatVersion,
		ID:        hex.EncodeToString(rid),
		Created:   now.UTC(),
		Encrypted: encrypted,
		Chunker:   ChunkerParams{Min: 512 << 10, Avg: 1 << 20, Max: 8 << 20},
		PackSize:  16 << 20,
	}, nil
}

// DecodeConfig parses and validates a config object.
func DecodeConfig(data []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%w: %v", ErrCorruptConfig, err)
	}
	if c.Version != FormatVersion {
		return c, fmt.Errorf("%w: %d (this program reads version %d)", ErrUnsupportedVersion, c.Version, FormatVersion)
	}
	ch := c.Chunker
	if ch.Min < 64 || ch.Avg <= ch.Min || ch.Max <= ch.Avg || ch.Max > 64<<20 || ch.Avg&(ch.Avg-1) != 0 {
		return c, fmt.Errorf("%w: chunker parameters %+v", ErrCorruptConfig, ch)
	}
	if c.PackSize < 1<<20 || c.PackSize > 1<<30 {
		return c, fmt.Errorf("%w: pack size %d", ErrCorruptConfig, c.PackSize)
	}
	if !c.Encrypted {
		if k, err := hex.DecodeString(c.ChunkerKey); err != nil || len(k) != 32 {
			return c, fmt.Errorf("%w: chunker key", ErrCorruptConfig)
		}
		if c.MAC != "" {
			// Only an encrypted repository has a key to make a MAC with:
			// a MAC beside "encrypted": false is a signed config edited.
			return c, fmt.Errorf("%w: an unencrypted config carries a MAC", ErrDowngrade)
		}
	} else if c.ChunkerKey != "" {
		return c, fmt.Errorf("%w: an encrypted repository's chunker key is never stored", ErrCorruptConfig)
	}
	return c, nil
}

// ReadConfig fetches and parses the config, mapping absence to ErrNotRepository.
func ReadConfig(ctx context.Context, st store.Store) (Config, error) {
	data, err := ReadConfigBytes(ctx, st)
	if err != nil {
		return Config{}, err
	}
	return DecodeConfig(data)
}

// ReadConfigBytes fetches the config object's bytes as stored (cat -raw
// prints them), mapping absence to ErrNotRepository.
func ReadConfigBytes(ctx context.Context, st store.Store) ([]byte, error) {
	data, err := st.Get(ctx, ConfigKey, MaxConfigSize)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w (no config object)", store.Describe(st), ErrNotRepository)
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return data, nil
}
