//go:build !windows

package operation_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// TestMountLock: Mount serves under a shared lock named "mount", which a
// backup's shared lock does not stop and an exclusive lock refuses before
// anything is served, and releases it however the mount ends. A mount that
// ends because its context did (Ctrl-C) ends well. Only that case mounts:
// the others name a FUSE device that is not there, which Serve checks
// first, under the lock.
func TestMountLock(t *testing.T) {
	if err := operation.CheckFuse(); err != nil {
		t.Fatalf("the mount tests need FUSE (scripts/test.sh creates /dev/fuse when it is missing): %v", err)
	}
	noFuse := filepath.Join(t.TempDir(), "no-fuse")
	cases := []struct {
		name    string
		held    string // the lock another process holds: "", "shared" or "exclusive"
		devFuse string // "": the host's
		cancel  bool   // cancel the mount's context once it serves
		serves  bool
		want    error
	}{
		{name: "alone", devFuse: noFuse, serves: true, want: operation.ErrNoFuse},
		{name: "beside a shared lock", held: "shared", devFuse: noFuse, serves: true, want: operation.ErrNoFuse},
		{name: "refused by the exclusive lock", held: "exclusive", devFuse: noFuse, want: operation.ErrLocked},
		{name: "ended by its context", cancel: true, serves: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			src := t.TempDir()
			checktest.WriteFile(t, src, "f", 1, 10<<10)
			checktest.Backup(t, st, src)
			var held []operation.LockInfo
			if c.held != "" {
				held = append(held, hold(t, st, c.held == "exclusive").Info())
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var served, unmounted bool
			err := operation.Mount(ctx, openRepo(t, dir), operation.MountRequest{
				Mountpoint: t.TempDir(),
				Options:    operation.MountOptions{DevFuse: c.devFuse, Warnf: t.Logf},
				Serving: func() {
					served = true
					wantLocks(t, st, held, true)
					if c.cancel {
						cancel()
					}
				},
				Unmounted: func() { unmounted = true },
			})
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Mount: %v, want %v", err, c.want)
			}
			if served != c.serves || unmounted != (err == nil) {
				t.Errorf("served %t, unmounted %t; want %t, %t", served, unmounted, c.serves, err == nil)
			}
			wantLocks(t, st, held, false)
		})
	}
}

// wantLocks fails unless st's locks are held's and, with mounting, one
// shared lock named "mount" besides.
func wantLocks(t *testing.T, st operation.Store, held []operation.LockInfo, mounting bool) {
	t.Helper()
	locks, err := operation.Locks(context.Background(), st, operation.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := len(held)
	if mounting {
		want++
	}
	mounts := 0
	for _, l := range locks {
		if l.Operation == "mount" && l.IsShared {
			mounts++
		}
	}
	if len(locks) != want || mounting != (mounts == 1) || mounts > 1 {
		t.Errorf("locks %+v; want the %d held elsewhere and, mounting (%t), one shared lock named mount", locks, len(held), mounting)
	}
}
