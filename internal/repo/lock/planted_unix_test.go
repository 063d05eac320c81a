//go:build unix

package lock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestPlantedLockFiles plants what an attacker with write access to a
// local store puts where a lock object should be: a symbolic link to
// /dev/zero (the old code read it until memory ran out, and break-lock
// could not remove it) and a FIFO (the old code's open waited for a
// writer). Each is an unreadable lock: acquiring fails at once with
// ErrLocked and ErrBadLock in one line, List reports it, break-lock
// -stale-only keeps it and break-lock removes it.
func TestPlantedLockFiles(t *testing.T) {
	t.Parallel()
	plants := []struct {
		name  string
		plant func(p string) error
	}{
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	}
	keys := []string{lock.ExclusiveKey, lock.SharedPrefix + "20260101T000000Z-0123456789abcdef"}
	for _, pl := range plants {
		for _, key := range keys {
			t.Run(pl.name+" at "+key, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				dir := t.TempDir()
				st := local.New(dir)
				p := filepath.Join(dir, filepath.FromSlash(key))
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := pl.plant(p); err != nil {
					t.Fatal(err)
				}
				acquire := lock.AcquireExclusive
				if key == lock.ExclusiveKey {
					acquire = lock.AcquireShared // blocked by any exclusive object
				}
				_, err := acquire(ctx, st, "test", lock.Options{})
				if !errors.Is(err, lock.ErrLocked) || !errors.Is(err, lock.ErrBadLock) || !errors.Is(err, store.ErrNotRegular) {
					t.Fatalf("acquire: %v, want ErrLocked, ErrBadLock and store.ErrNotRegular", err)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, p) {
					t.Errorf("error is not one line naming %s: %q", p, msg)
				}
				infos, err := lock.List(ctx, st, lock.Options{})
				if err != nil || len(infos) != 1 || infos[0].Key != key || !errors.Is(infos[0].Err, lock.ErrBadLock) {
					t.Fatalf("List: %+v %v, want one unreadable lock", infos, err)
				}
				if _, err := lock.Break(ctx, st, true, lock.Options{}); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("break-lock -stale-only removed an unreadable lock: %v", err)
				}
				removed, err := lock.Break(ctx, st, false, lock.Options{})
				if err != nil || len(removed) != 1 {
					t.Fatalf("break-lock removed %+v: %v", removed, err)
				}
				l, err := acquire(ctx, st, "test", lock.Options{})
				if err != nil {
					t.Fatalf("acquire after break-lock: %v", err)
				}
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
