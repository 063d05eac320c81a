package repo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// configAfterSlots is a store whose config read does not answer until the
// key slots' listing has begun: an open that reads them one after the
// other waits for ever (here: until the context's deadline).
type configAfterSlots struct {
	store.Store
	listed chan struct{}
}

func (s *configAfterSlots) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if key == repo.ConfigKey {
		select {
		case <-s.listed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Get(ctx, key, max)
}

func (s *configAfterSlots) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	if strings.HasPrefix(prefix, repo.KeysPrefix) {
		select {
		case <-s.listed:
		default:
			close(s.listed)
		}
	}
	return s.Store.List(ctx, prefix, fn)
}

// TestOpenReadsSlotsBesideConfig: opening a repository (repo.Open, and the
// keyring's open) reads the key slots while the config is being read, not
// after it, saving a round trip on a remote store.
func TestOpenReadsSlotsBesideConfig(t *testing.T) {
	dir := t.TempDir()
	creds := repo.Credentials{Password: "pw"}
	if _, _, err := repo.Init(context.Background(), local.New(dir), repo.InitOptions{Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		open func(ctx context.Context, st store.Store) error
	}{
		{"repository", func(ctx context.Context, st store.Store) error {
			_, err := repo.Open(ctx, st, creds)
			return err
		}},
		{"keyring", func(ctx context.Context, st store.Store) error {
			_, err := repo.OpenKeyring(ctx, st, creds)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st := &configAfterSlots{Store: local.New(dir), listed: make(chan struct{})}
			if err := tc.open(ctx, st); err != nil {
				t.Fatalf("open: %v (the config was read only after the key slots)", err)
			}
		})
	}
}
