package lock

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestDefaultHolder: a lock taken without Hostname or PID names this host
// and process, "HOST (pid N)", on every platform (under Wine, the Windows
// host name and process id).
func TestDefaultHolder(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s (pid %d)", host, os.Getpid())
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := local.New(t.TempDir())
			acquire := AcquireExclusive
			if shared {
				acquire = AcquireShared
			}
			l, err := acquire(ctx, st, "test", Options{})
			if err != nil {
				t.Fatal(err)
			}
			infos, err := List(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// An exclusive lock is its key and the intent it was queued by.
			if len(infos) == 0 {
				t.Fatal("no lock listed")
			}
			for _, info := range infos {
				if info.Holder != want || info.IsShared != shared {
					t.Errorf("%s held by %q, shared %v; want %q, shared %v", info.Key, info.Holder, info.IsShared, want, shared)
				}
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
