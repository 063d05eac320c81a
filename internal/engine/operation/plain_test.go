package operation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// plainRepos are the stores CatConfig and ListKeys are tried on: each
// makes one in dir.
var plainRepos = []struct {
	name  string
	make  func(t *testing.T, dir string)
	check func(t *testing.T, c operation.RepoConfig, slots []operation.KeySlot)
	// err is what both operations fail with (nil: they succeed); badConfig
	// is what CatConfig leaves in the object's Err.
	err, badConfig error
}{
	{name: "not a repository", make: func(*testing.T, string) {}, err: operation.ErrNoRepository},
	{name: "encrypted", make: func(t *testing.T, dir string) { checktest.NewRepo(t, dir) },
		check: func(t *testing.T, c operation.RepoConfig, slots []operation.KeySlot) {
			if !c.Encrypted || len(slots) != 1 || slots[0].Kind != crypt.SlotPlatform || slots[0].Err != nil {
				t.Errorf("encrypted: %+v, slots %+v; want encrypted, one platform slot", c, slots)
			}
		}},
	{name: "unencrypted", make: func(t *testing.T, dir string) {
		if _, _, err := repo.Init(context.Background(), local.New(dir), repo.InitOptions{NoEncryption: true}); err != nil {
			t.Fatal(err)
		}
	}, check: func(t *testing.T, c operation.RepoConfig, slots []operation.KeySlot) {
		if c.Encrypted || c.ChunkerKey == "" || len(slots) != 0 {
			t.Errorf("unencrypted: %+v, slots %+v; want unencrypted with a chunker key, no slots", c, slots)
		}
	}},
	{name: "corrupt config", make: func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(`{"version": 1}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}, err: repo.ErrCorruptConfig, badConfig: repo.ErrCorruptConfig},
}

// openPlain makes the store c.make fills in a new directory and opens it
// through the operation layer, as `cat config` and `key list` do.
func openPlain(t *testing.T, fill func(t *testing.T, dir string)) operation.Store {
	t.Helper()
	dir := t.TempDir()
	fill(t, dir)
	st, err := operation.OpenStore(context.Background(), operation.StoreOptions{URI: "local:" + dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() }) // a local store's Close fails never
	return st
}

// TestCatConfig reads the config of each kind of store: its bytes as
// stored, decoded too when they are a valid config, and ErrNoRepository
// where there is none.
func TestCatConfig(t *testing.T) {
	for _, c := range plainRepos {
		t.Run(c.name, func(t *testing.T) {
			st := openPlain(t, c.make)
			obj, err := operation.CatConfig(context.Background(), st)
			if c.badConfig == nil && !errors.Is(err, c.err) || c.badConfig != nil && err != nil {
				t.Fatalf("CatConfig: %v, want %v", err, c.err)
			}
			if err != nil {
				if !errors.Is(err, repo.ErrNotRepository) {
					t.Errorf("CatConfig: %v, want it to wrap %v too", err, repo.ErrNotRepository)
				}
				return
			}
			if !errors.Is(obj.Err, c.badConfig) || (c.badConfig == nil) != (obj.Err == nil) {
				t.Errorf("config's Err: %v, want %v", obj.Err, c.badConfig)
			}
			stored, err := st.Get(context.Background(), repo.ConfigKey, repo.MaxConfigSize)
			if err != nil || string(obj.Raw) != string(stored) {
				t.Errorf("Raw: %q, want the object as stored %q (%v)", obj.Raw, stored, err)
			}
			if c.check == nil {
				return
			}
			var decoded operation.RepoConfig
			if err := json.Unmarshal(stored, &decoded); err != nil || decoded != obj.Config {
				t.Errorf("Config: %+v, want the stored %+v (%v)", obj.Config, decoded, err)
			}
			slots, err := operation.ListKeys(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, obj.Config, slots)
		})
	}
}

// TestListKeys lists the key slots of each kind of store: a store with no
// valid config fails as it does.
func TestListKeys(t *testing.T) {
	for _, c := range plainRepos {
		t.Run(c.name, func(t *testing.T) {
			st := openPlain(t, c.make)
			slots, err := operation.ListKeys(context.Background(), st)
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("ListKeys: %v, want %v", err, c.err)
			}
			if err != nil {
				if slots != nil {
					t.Errorf("ListKeys failed but returned %+v", slots)
				}
				return
			}
			cfg, err := repo.ReadConfig(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg, slots)
		})
	}
}
