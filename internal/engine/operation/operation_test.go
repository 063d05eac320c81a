package operation_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestOperationsTakeTheirLock runs each operation while another process
// holds a lock: what the seed says conflicts fails with ErrLocked and
// writes nothing, the rest runs, and no operation leaves its lock behind.
func TestOperationsTakeTheirLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 100<<10)
	checktest.Backup(t, st, src)
	open := func(t *testing.T) *operation.Repo { return openRepo(t, dir) }
	ops := map[string]func(t *testing.T) error{
		"backup": func(t *testing.T) error {
			_, err := operation.Backup(ctx, open(t), backup.Options{Path: src}, nil)
			return err
		},
		"backup -dry-run": func(t *testing.T) error {
			_, err := operation.Backup(ctx, open(t), backup.Options{Path: src, DryRun: true}, nil)
			return err
		},
		"restore -dry-run": func(t *testing.T) error {
			_, err := operation.Restore(ctx, open(t), "latest",
				restore.Options{Output: filepath.Join(t.TempDir(), "out"), DryRun: true}, nil)
			return err
		},
		"prune": func(t *testing.T) error {
			_, err := operation.Prune(ctx, open(t), prune.Options{})
			return err
		},
		"prune -dry-run": func(t *testing.T) error {
			_, err := operation.Prune(ctx, open(t), prune.Options{DryRun: true})
			return err
		},
		"tag": func(t *testing.T) error {
			_, err := operation.Tag(ctx, open(t), tag.Options{Add: []string{"x"}, IDs: []string{"latest"}})
			return err
		},
		"tag -dry-run": func(t *testing.T) error {
			_, err := operation.Tag(ctx, open(t), tag.Options{Add: []string{"y"}, IDs: []string{"latest"}, DryRun: true})
			return err
		},
		"forget -prune": func(t *testing.T) error {
			_, _, err := operation.Forget(ctx, open(t),
				forget.Options{Policy: forget.Policy{Last: 5}}, &prune.Options{}, nil)
			return err
		},
	}
	cases := []struct {
		held    string // "shared" or "exclusive"
		blocked map[string]bool
	}{
		{"shared", map[string]bool{"prune": true, "forget -prune": true}},
		{"exclusive", map[string]bool{"backup": true, "restore -dry-run": true, "prune": true, "forget -prune": true, "tag": true}},
	}
	for _, c := range cases {
		t.Run(c.held, func(t *testing.T) {
			held := hold(t, st, c.held == "exclusive")
			for name, op := range ops {
				err := op(t)
				if c.blocked[name] != errors.Is(err, lock.ErrLocked) || (!c.blocked[name] && err != nil) {
					t.Errorf("%s with a %s lock held: %v (blocked: %v)", name, c.held, err, c.blocked[name])
				}
			}
			if err := held.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if locks, err := lock.List(ctx, st, lock.Options{}); err != nil || len(locks) != 0 {
				t.Fatalf("locks left: %v %+v", err, locks)
			}
		})
	}
}

// TestKeyRemovalTakesExclusiveLock: key passwd and key remove wait for no
// one: a running backup's shared lock makes them fail, removing nothing.
func TestKeyRemovalTakesExclusiveLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	// checktest repositories use a platform key; add a password slot.
	kr, err := operation.OpenKeyring(ctx, options(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kr.Close() }) // a local store's Close fails never
	if _, err := operation.KeyAdd(ctx, kr, crypt.SlotPassword, "laptop", []byte("pw")); err != nil {
		t.Fatal(err)
	}
	held := hold(t, st, false)
	if _, err := operation.KeyRemove(ctx, kr, "laptop"); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("key remove during a backup: %v", err)
	}
	if _, err := operation.KeyPasswd(ctx, kr, "new", ""); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("key passwd during a backup: %v", err)
	}
	if slots, err := kr.List(ctx); err != nil || len(slots) != 2 {
		t.Fatalf("slots: %v %+v", err, slots)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := operation.KeyRemove(ctx, kr, "laptop"); err != nil || s.Label != "laptop" {
		t.Fatalf("key remove: %+v %v", s, err)
	}
}

// hold takes a lock on st as another process would; the test releases it.
func hold(t *testing.T, st store.Store, exclusive bool) *lock.Lock {
	t.Helper()
	take := lock.AcquireShared
	if exclusive {
		take = lock.AcquireExclusive
	}
	l, err := take(context.Background(), st, "other", lock.Options{Hostname: "elsewhere", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) }) // a second Release does nothing
	return l
}

// TestBackupValidatesFirst: a bad exclude pattern is reported as such, before
// the lock is even asked for (here, an exclusive lock held elsewhere).
func TestBackupValidatesFirst(t *testing.T) {
	dir := t.TempDir()
	hold(t, checktest.NewRepo(t, dir), true)
	_, err := operation.Backup(context.Background(), openRepo(t, dir),
		backup.Options{Path: t.TempDir(), Excludes: []string{"ok", "[a-"}}, nil)
	if !errors.Is(err, exclude.ErrPattern) {
		t.Fatalf("backup with a bad exclude: %v, want %v", err, exclude.ErrPattern)
	}
}

// options are the operation options of the checktest repository in dir.
func options(dir string) operation.Options {
	return operation.Options{
		Store: operation.StoreOptions{URI: "local:" + dir},
		Credentials: func(context.Context) (repo.Credentials, error) {
			return repo.Credentials{PlatformKey: checktest.Key}, nil
		},
	}
}

// openRepo opens the checktest repository in dir through the operation
// layer; the test closes it.
func openRepo(t *testing.T, dir string) *operation.Repo {
	t.Helper()
	r, err := operation.Open(context.Background(), options(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() }) // a local store's Close fails never
	return r
}
