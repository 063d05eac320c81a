package repo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// exclusiveLease takes the exclusive lock on st until the test ends.
func exclusiveLease(t *testing.T, st store.Store) *lock.Lock {
	t.Helper()
	l, err := lock.AcquireExclusive(context.Background(), st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return l
}

// bindConfig binds r's config under lease (repo.ExclusiveWriter.BindConfig).
func bindConfig(ctx context.Context, r *repo.Repository, lease *lock.Lock) error {
	w, err := r.ExclusiveWriter(lease)
	if err != nil {
		return err
	}
	return w.BindConfig(ctx)
}

// sharedWriter returns a writer on r, opened on st, under a shared lock
// held until the test ends.
func sharedWriter(t *testing.T, r *repo.Repository, st store.Store) *repo.Writer {
	t.Helper()
	l, err := lock.AcquireShared(context.Background(), st, "test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
	w, err := r.Writer(l)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// downgrade edits the config in dir as a store writer without the key
// would to switch encryption off: encrypted false, a chunker key of its
// choosing, the MAC dropped.
func downgrade(m map[string]any) {
	m["encrypted"] = false
	m["chunker_key"] = strings.Repeat("00", 32)
	delete(m, "mac")
}

// TestConfigBinding edits an encrypted repository's config as a store
// writer without the key would: every edit is refused when the repository
// is opened, with the sentinel naming the tampering.
func TestConfigBinding(t *testing.T) {
	t.Parallel()
	key := repo.Credentials{PlatformKey: hostileKey}
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		keys  bool // keep keys/; false: the attacker removed the slots too
		creds repo.Credentials
		want  error
	}{
		{"encryption off, a key given", downgrade, true, key, repo.ErrDowngrade},
		{"encryption off, a wrong password given", downgrade, true, repo.Credentials{Password: "wrong"}, repo.ErrDowngrade},
		{"encryption off, slots left, nothing given", downgrade, true, repo.Credentials{}, repo.ErrDowngrade},
		{"encryption off, slots removed, a key given", downgrade, false, key, repo.ErrDowngrade},
		{"encryption off, the MAC kept", func(m map[string]any) { m["encrypted"] = false; m["chunker_key"] = strings.Repeat("00", 32) },
			true, repo.Credentials{}, repo.ErrDowngrade},
		{"chunker average changed", func(m map[string]any) { m["chunker"].(map[string]any)["avg"] = 2 << 20 }, true, key, repo.ErrConfigTampered},
		{"pack size changed", func(m map[string]any) { m["pack_size"] = 1 << 21 }, true, key, repo.ErrConfigTampered},
		{"id changed", func(m map[string]any) { m["id"] = strings.Repeat("ab", 16) }, true, key, repo.ErrConfigTampered},
		{"created changed", func(m map[string]any) { m["created"] = "2001-01-01T00:00:00Z" }, true, key, repo.ErrConfigTampered},
		{"MAC not hex", func(m map[string]any) { m["mac"] = "zz" }, true, key, repo.ErrConfigTampered},
		{"MAC of another config", func(m map[string]any) { m["mac"] = strings.Repeat("00", 32) }, true, key, repo.ErrConfigTampered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, st := newHostileRepo(t)
			editJSON(t, filepath.Join(dir, "config"), tc.edit)
			if !tc.keys {
				if err := os.RemoveAll(filepath.Join(dir, "keys")); err != nil {
					t.Fatal(err)
				}
			}
			_, err := repo.Open(context.Background(), st, tc.creds)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if tc.keys {
				_, err = repo.OpenKeyring(context.Background(), st, key)
				if !errors.Is(err, tc.want) {
					t.Errorf("OpenKeyring: %v, want %v", err, tc.want)
				}
			}
		})
	}
}

// TestConfigBindingUnencrypted: a repository made without encryption opens
// without credentials and is refused with them (the user expects an
// encrypted repository: it may be one whose encryption was switched off).
func TestConfigBindingUnencrypted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := local.New(t.TempDir())
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{NoEncryption: true}); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(ctx, st, repo.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ConfigAuthenticated() {
		t.Error("an unencrypted config reported as authenticated")
	}
	if _, err := repo.Open(ctx, st, repo.Credentials{Password: "pw"}); !errors.Is(err, repo.ErrDowngrade) {
		t.Errorf("Open with a password: %v, want ErrDowngrade", err)
	}
	if _, err := repo.OpenKeyring(ctx, st, repo.Credentials{Password: "pw"}); !errors.Is(err, repo.ErrNotEncrypted) {
		t.Errorf("OpenKeyring: %v, want ErrNotEncrypted", err)
	}
	if err := bindConfig(ctx, r, exclusiveLease(t, st)); !errors.Is(err, repo.ErrNothingToBind) {
		t.Errorf("BindConfig: %v, want ErrNothingToBind", err)
	}
}

// TestBindConfig: a config written before configs had a MAC opens (not
// authenticated), BindConfig adds the MAC, and from then on an edit is
// refused.
func TestBindConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := repo.Credentials{PlatformKey: hostileKey}
	dir, st := newHostileRepo(t)
	lease := exclusiveLease(t, st)
	r, err := repo.Open(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ConfigAuthenticated() {
		t.Fatal("a new repository's config is not authenticated")
	}
	if err := bindConfig(ctx, r, lease); !errors.Is(err, repo.ErrNothingToBind) {
		t.Errorf("BindConfig of a bound config: %v, want ErrNothingToBind", err)
	}

	editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { delete(m, "mac") })
	legacy, err := repo.Open(ctx, st, key)
	if err != nil {
		t.Fatalf("a config without a MAC (older repositories) does not open: %v", err)
	}
	if legacy.ConfigAuthenticated() {
		t.Fatal("a config without a MAC reported as authenticated")
	}
	if err := bindConfig(ctx, legacy, nil); !errors.Is(err, repo.ErrNoLease) {
		t.Errorf("BindConfig without a lease: %v, want ErrNoLease", err)
	}
	if err := bindConfig(ctx, legacy, lease); err != nil {
		t.Fatal(err)
	}
	if !legacy.ConfigAuthenticated() {
		t.Error("not authenticated after BindConfig")
	}
	bound, err := repo.Open(ctx, st, key)
	if err != nil || !bound.ConfigAuthenticated() {
		t.Fatalf("after BindConfig: %v, authenticated %v", err, bound != nil && bound.ConfigAuthenticated())
	}
	if bound.Config() != r.Config() {
		t.Errorf("BindConfig changed the config: %+v, was %+v", bound.Config(), r.Config())
	}
	editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { m["pack_size"] = 1 << 21 })
	if _, err := repo.Open(ctx, st, key); !errors.Is(err, repo.ErrConfigTampered) {
		t.Errorf("edited after BindConfig: %v, want ErrConfigTampered", err)
	}
}

// TestBindConfigRace: BindConfig refuses to sign a config that changed
// since the repository was opened (compare-and-swap stores).
func TestBindConfigRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := repo.Credentials{PlatformKey: hostileKey}
	dir, st := newHostileRepo(t)
	editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { delete(m, "mac") })
	r, err := repo.Open(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { m["pack_size"] = 1 << 21 })
	if err := bindConfig(ctx, r, exclusiveLease(t, st)); !errors.Is(err, repo.ErrConfigTampered) {
		t.Errorf("BindConfig over a changed config: %v, want ErrConfigTampered", err)
	}
}
