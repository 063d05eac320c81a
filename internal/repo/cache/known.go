package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Known is this host's memory of the repositories it has opened or
// created encrypted. An encrypted repository's config cannot be switched
// to "not encrypted" without the key being needed to notice, so a host
// that remembers having seen the repository encrypted refuses such a
// config (as borg's security directory does).
//
// The memory is one empty file per repository id and one per store
// location under <dir>/known/: a store writer who also changes the
// repository id is still caught at the same location, and one who moves
// the repository is caught by its id. Names are SHA-256 hashes, so
// locations with credentials in them are not written out.
type Known struct {
	dir string
}

// NewKnown returns the memory kept in the cache directory dir (see
// DirFromEnv).
func NewKnown(dir string) *Known {
	return &Known{dir: filepath.Join(dir, "known")}
}

// files returns the files recording repoID and location.
func (k *Known) files(repoID, location string) []string {
	name := func(kind, v string) string {
		sum := sha256.Sum256([]byte(kind + "\x00" + v))
		return filepath.Join(k.dir, kind+"-"+hex.EncodeToString(sum[:]))
	}
	return []string{name("id", repoID), name("at", location)}
}

// RememberEncrypted records that the repository repoID at location is
// encrypted.
func (k *Known) RememberEncrypted(repoID, location string) error {
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return fmt.Errorf("remembering an encrypted repository: %w", err)
	}
	for _, p := range k.files(repoID, location) {
		if _, err := os.Stat(p); err == nil {
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("remembering an encrypted repository: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("remembering an encrypted repository: %w", err)
		}
	}
	return nil
}

// WasEncrypted returns the file that records the repository repoID, or
// the one at location, as encrypted; "" when this host has no such
// record.
func (k *Known) WasEncrypted(repoID, location string) (string, error) {
	for _, p := range k.files(repoID, location) {
		_, err := os.Stat(p)
		switch {
		case err == nil:
			return p, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("reading this host's record of encrypted repositories: %w", err)
		}
	}
	return "", nil
}
