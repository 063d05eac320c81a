//go:build !windows

package operation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// TestMountLock: Mount serves under a shared lock named "mount", which a
// backup's shared lock does not stop and an exclusive lock refuses before
// anything is served, and releases it however the mount ends. A mount that
// ends because its context did (Ctrl-C) ends well, once mounted or before.
// The cases that expect ErrNoFuse name a FUSE device that is not there,
// which Serve checks first, under the lock.
func TestMountLock(t *testing.T) {
	if err := operation.CheckFuse(); err != nil {
		t.Fatalf("the mount tests need FUSE (scripts/test.sh creates /dev/fuse when it is missing): %v", err)
	}
	noFuse := filepath.Join(t.TempDir(), "no-fuse")
	cases := []struct {
		name    string
		held    string // the lock another process holds: "", "shared" or "exclusive"
		devFuse string // "": the host's
		cancel  string // when the test cancels the mount's context: "", "serving", "mounted"
		serves  bool
		want    error
	}{
		{name: "alone", devFuse: noFuse, serves: true, want: operation.ErrNoFuse},
		{name: "beside a shared lock", held: "shared", devFuse: noFuse, serves: true, want: operation.ErrNoFuse},
		{name: "refused by the exclusive lock", held: "exclusive", devFuse: noFuse, want: operation.ErrLocked},
		{name: "ended by its context before mounting", cancel: "serving", serves: true},
		{name: "ended by its context once mounted", cancel: "mounted", serves: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			src := t.TempDir()
			checktest.WriteFile(t, src, "f", 1, 10<<10)
			checktest.Backup(t, st, src)
			if c.held != "" {
				hold(t, st, c.held == "exclusive")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mp := t.TempDir()
			var served, unmounted bool
			mounted := make(chan bool, 1)
			err := operation.Mount(ctx, openRepo(t, dir), operation.MountRequest{
				Mountpoint: mp,
				Options:    operation.MountOptions{DevFuse: c.devFuse, Warnf: t.Logf},
				Serving: func() {
					served = true
					wantLocks(t, st, true)
					switch c.cancel {
					case "serving":
						cancel()
					case "mounted":
						go func() { defer cancel(); mounted <- waitMounted(ctx, mp) }()
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
			if c.cancel == "mounted" && !<-mounted {
				t.Errorf("%s never showed the snapshots", mp)
			}
			if _, err := os.Stat(filepath.Join(mp, "snapshots")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s after the mount: %v, want it unmounted", mp, err)
			}
			wantLocks(t, st, false)
		})
	}
}

// waitMounted reports whether the mount at mp shows its snapshots
// directory within a minute (a bound on hangs, not a timing check).
func waitMounted(ctx context.Context, mp string) bool {
	deadline := time.After(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(mp, "snapshots")); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// wantLocks fails unless st holds, mounting, one shared lock named
// "mount" and otherwise none, beside those hold took ("other").
func wantLocks(t *testing.T, st operation.Store, mounting bool) {
	t.Helper()
	locks, err := operation.Locks(context.Background(), st, operation.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mounts := 0
	for _, l := range locks {
		switch {
		case l.Operation == "mount" && l.IsShared:
			mounts++
		case l.Operation != "other":
			t.Errorf("unexpected lock %+v", l)
		}
	}
	if want := map[bool]int{true: 1, false: 0}[mounting]; mounts != want {
		t.Errorf("%d shared locks named mount, want %d: %+v", mounts, want, locks)
	}
}
