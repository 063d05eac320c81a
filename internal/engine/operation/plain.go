package operation

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// The reads of a repository's plain objects, which need no credentials and
// no lock, on a store (OpenStore): the config (cat config) and the key
// slots (key list). The lock objects, plain too, are locks.go's.

// What front ends render of the plain objects.
type (
	// RepoConfig is a repository's config (repo.Config).
	RepoConfig = repo.Config
	// KeySlot describes one key slot, no secret material (repo.KeySlot).
	KeySlot = repo.KeySlot
)

// ConfigObject is a repository's config object as CatConfig read it.
type ConfigObject struct {
	// Raw is the object's bytes as stored.
	Raw []byte
	// Config is Raw decoded and validated (repo.DecodeConfig), when Err
	// is nil.
	Config RepoConfig
	// Err says why Raw is not a valid config (repo.ErrCorruptConfig,
	// ErrUnsupportedVersion, ErrDowngrade): Raw is still what is stored.
	Err error
}

// CatConfig reads the config object of the repository in st (`cat
// config`). A store that holds none fails with ErrNoRepository (beside
// repo.ErrNotRepository); a config that is there but not valid is
// returned with its Err set, so that its bytes can still be shown.
func CatConfig(ctx context.Context, st Store) (ConfigObject, error) {
	data, err := repo.ReadConfigBytes(ctx, st)
	if err != nil {
		return ConfigObject{}, notRepository(err)
	}
	c, err := repo.DecodeConfig(data)
	return ConfigObject{Raw: data, Config: c, Err: err}, nil
}

// ListKeys returns every key slot of the repository in st (`key list`),
// oldest first, unreadable ones with their Err set (repo.ListKeys). The
// store must hold a valid config: with none, it fails with ErrNoRepository
// (beside repo.ErrNotRepository). An unencrypted repository has no slots.
func ListKeys(ctx context.Context, st Store) ([]KeySlot, error) {
	if _, err := repo.ReadConfig(ctx, st); err != nil {
		return nil, notRepository(err)
	}
	return repo.ListKeys(ctx, st)
}

// notRepository adds ErrNoRepository to err when it says the store holds
// no config object.
func notRepository(err error) error {
	if errors.Is(err, repo.ErrNotRepository) {
		return fmt.Errorf("%w: %w", ErrNoRepository, err)
	}
	return err
}
