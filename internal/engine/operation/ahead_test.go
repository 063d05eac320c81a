package operation_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// sharedLockPrefix is where shared locks are written.
const sharedLockPrefix = "index/lock.shared/"

// lockGate is a store whose shared-lock writes wait until open is closed,
// and which counts them.
type lockGate struct {
	store.Store
	open chan struct{}

	mu     sync.Mutex
	shared int
}

func (g *lockGate) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if strings.HasPrefix(key, sharedLockPrefix) {
		g.mu.Lock()
		g.shared++
		g.mu.Unlock()
		select {
		case <-g.open:
		case <-ctx.Done():
			return store.ObjectInfo{}, ctx.Err()
		}
	}
	return g.Store.Put(ctx, key, data, opts)
}

func (g *lockGate) sharedPuts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shared
}

// lockObjects lists the lock objects in the repository in dir.
func lockObjects(t *testing.T, dir string) []string {
	t.Helper()
	var keys []string
	err := local.New(dir).List(context.Background(), "index/lock", func(oi store.ObjectInfo) error {
		keys = append(keys, oi.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestLockAhead: Open with a LockAhead starts taking that lock and returns
// without waiting for it (over a network the key's derivation and the
// lock's requests overlap); the operation it names takes that lock over
// instead of writing a second one; another operation takes its own; and
// the lock never outlives the repository: Close releases one no operation
// took, a failed open one it started.
func TestLockAhead(t *testing.T) {
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	pwDir := t.TempDir()
	if _, _, err := repo.Init(context.Background(), local.New(pwDir), repo.InitOptions{Credentials: repo.Credentials{Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 64<<10)
	doBackup := func(ctx context.Context, r *operation.Repo) error {
		_, err := operation.Backup(ctx, r, backup.Options{Path: src}, nil)
		return err
	}
	doRestore := func(ctx context.Context, r *operation.Repo) error {
		_, err := operation.Restore(ctx, r, "latest", restore.Options{Output: t.TempDir()}, nil)
		return err
	}
	for _, tc := range []struct {
		name      string
		ahead     operation.LockAhead
		run       func(ctx context.Context, r *operation.Repo) error // nil: none
		wantPuts  int                                                // shared locks written; -1: at most one
		wrongCred bool
	}{
		{"backup takes it over", operation.BackupLockAhead, doBackup, 1, false},
		{"restore takes it over", operation.RestoreLockAhead, doRestore, 1, false},
		{"another operation takes its own", operation.RestoreLockAhead, doBackup, 2, false},
		{"close releases it unused", operation.BackupLockAhead, nil, 1, false},
		// A wrong password fails after argon2id, by when the lock is
		// usually held: it is released.
		{"a failed open releases it", operation.BackupLockAhead, nil, -1, true},
		{"none asked for", operation.NoLockAhead, doBackup, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			gate := &lockGate{open: make(chan struct{})}
			o := options(dir)
			if tc.wrongCred {
				o = options(pwDir)
				o.Credentials = func(context.Context) (repo.Credentials, error) {
					return repo.Credentials{Password: "wrong"}, nil
				}
			}
			o.LockAhead = tc.ahead
			o.Store.TestWrapper = func(st store.Store) store.Store { gate.Store = st; return gate }
			type opened struct {
				r   *operation.Repo
				err error
			}
			done := make(chan opened, 1)
			go func() {
				r, err := operation.Open(ctx, o)
				done <- opened{r, err}
			}()
			var res opened
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				close(gate.open)
				t.Fatal("Open waited for the lock it takes ahead")
			}
			close(gate.open)
			if tc.wrongCred {
				if res.err == nil {
					t.Fatal("Open with a wrong password succeeded")
				}
			} else {
				if res.err != nil {
					t.Fatal(res.err)
				}
				if tc.run != nil {
					if err := tc.run(ctx, res.r); err != nil {
						t.Fatal(err)
					}
				}
				if err := res.r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if n := gate.sharedPuts(); n != tc.wantPuts && (tc.wantPuts != -1 || n > 1) {
				t.Errorf("%d shared locks written, want %d", n, tc.wantPuts)
			}
			if left := append(lockObjects(t, dir), lockObjects(t, pwDir)...); len(left) > 0 {
				t.Errorf("lock objects left: %v", left)
			}
		})
	}
}
