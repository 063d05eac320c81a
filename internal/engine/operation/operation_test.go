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
	st := checktest.NewRepo(t, t.TempDir())
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 100<<10)
	checktest.Backup(t, st, src)
	open := func(t *testing.T) *repo.Repository { return checktest.Open(t, st) }
	ops := map[string]func(t *testing.T) error{
		"backup": func(t *testing.T) error {
			_, err := operation.Backup(ctx, operation.Env{}, open(t), backup.Options{Path: src}, nil)
			return err
		},
		"backup -dry-run": func(t *testing.T) error {
			_, err := operation.Backup(ctx, operation.Env{}, open(t), backup.Options{Path: src, DryRun: true}, nil)
			return err
		},
		"restore -dry-run": func(t *testing.T) error {
			_, err := operation.Restore(ctx, operation.Env{}, open(t), "latest",
				restore.Options{Output: filepath.Join(t.TempDir(), "out"), DryRun: true}, nil)
			return err
		},
		"prune": func(t *testing.T) error {
			_, err := operation.Prune(ctx, operation.Env{}, open(t), prune.Options{})
			return err
		},
		"prune -dry-run": func(t *testing.T) error {
			_, err := operation.Prune(ctx, operation.Env{}, open(t), prune.Options{DryRun: true})
			return err
		},
		"tag": func(t *testing.T) error {
			_, err := operation.Tag(ctx, operation.Env{}, open(t), tag.Options{Add: []string{"x"}, IDs: []string{"latest"}})
			return err
		},
		"tag -dry-run": func(t *testing.T) error {
			_, err := operation.Tag(ctx, operation.Env{}, open(t), tag.Options{Add: []string{"y"}, IDs: []string{"latest"}, DryRun: true})
			return err
		},
		"forget -prune": func(t *testing.T) error {
			_, _, err := operation.Forget(ctx, operation.Env{}, open(t),
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
	st := checktest.NewRepo(t, t.TempDir())
	// checktest repositories use a platform key; add a password slot.
	kr, err := repo.OpenKeyring(ctx, st, repo.Credentials{PlatformKey: checktest.Key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Add(ctx, crypt.SlotPassword, "laptop", []byte("pw")); err != nil {
		t.Fatal(err)
	}
	held := hold(t, st, false)
	if _, err := operation.KeyRemove(ctx, operation.Env{}, kr, "laptop"); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("key remove during a backup: %v", err)
	}
	if _, err := operation.KeyPasswd(ctx, operation.Env{}, kr, "new", ""); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("key passwd during a backup: %v", err)
	}
	if slots, err := kr.List(ctx); err != nil || len(slots) != 2 {
		t.Fatalf("slots: %v %+v", err, slots)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := operation.KeyRemove(ctx, operation.Env{}, kr, "laptop"); err != nil || s.Label != "laptop" {
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
	st := checktest.NewRepo(t, t.TempDir())
	hold(t, st, true)
	_, err := operation.Backup(context.Background(), operation.Env{}, checktest.Open(t, st),
		backup.Options{Path: t.TempDir(), Excludes: []string{"ok", "[a-"}}, nil)
	if !errors.Is(err, exclude.ErrPattern) {
		t.Fatalf("backup with a bad exclude: %v, want %v", err, exclude.ErrPattern)
	}
}
