package operation_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// requestKinds counts the requests that reach the store by kind: the
// operation and the key's first element ("GET snapshots/", "LIST index/").
// Totals of all kinds are in operation.Repo.Counts.
type requestKinds struct {
	store.Store
	mu sync.Mutex
	n  map[string]int64
}

func (s *requestKinds) count(op, key string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		key = key[:i+1]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int64{}
	}
	s.n[op+" "+key]++
}

// Get counts and forwards.
func (s *requestKinds) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	s.count("GET", key)
	return s.Store.Get(ctx, key, max)
}

// GetRange counts and forwards.
func (s *requestKinds) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.count("GETRANGE", key)
	return s.Store.GetRange(ctx, key, off, n)
}

// Put counts and forwards.
func (s *requestKinds) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	s.count("PUT", key)
	return s.Store.Put(ctx, key, data, opts)
}

// Stat counts and forwards.
func (s *requestKinds) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	s.count("STAT", key)
	return s.Store.Stat(ctx, key)
}

// List counts and forwards.
func (s *requestKinds) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	s.count("LIST", prefix)
	return s.Store.List(ctx, prefix, fn)
}

// get returns the count of one kind.
func (s *requestKinds) get(kind string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[kind]
}

// snapshotGets is the kind of the GETs of snapshot objects.
const snapshotGets = "GET " + repo.SnapshotPrefix

// backupCounted runs one backup of src with o (with a metadata cache in
// cacheDir when it is not empty) and returns its requests by kind and in
// total, the opening of the repository included.
func backupCounted(tb testing.TB, o operation.Options, cacheDir string, opts backup.Options) (*requestKinds, int64) {
	tb.Helper()
	ctx := context.Background()
	kinds := &requestKinds{}
	if cacheDir != "" {
		o.Cache = &cache.Options{Dir: cacheDir}
	}
	o.Store.TestWrapper = func(st store.Store) store.Store { kinds.Store = st; return kinds }
	r, err := operation.Open(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close() //nolint:errcheck // only drops idle connections
	if _, err := operation.Backup(ctx, r, opts, nil); err != nil {
		tb.Fatal(err)
	}
	return kinds, r.Counts().Requests
}

// initRepo creates a repository with the store o names.
func initRepo(tb testing.TB, o operation.Options) {
	tb.Helper()
	ctx := context.Background()
	st, err := operation.OpenStore(ctx, o.Store)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // only drops idle connections
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{PlatformKey: checktest.Key}}); err != nil {
		tb.Fatal(err)
	}
}

// addSnapshots copies the repository's only snapshot until it holds n:
// the same tree, from 100 hosts, 100 sources each, one minute apart, each
// copy a distinct object. Cheap: no backup runs.
func addSnapshots(tb testing.TB, o operation.Options, n int) {
	tb.Helper()
	ctx := context.Background()
	// Past the operation layer, which writes only in its operations: the
	// store itself, a shared lock and a writer under it.
	st, err := operation.OpenStore(ctx, o.Store)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // only drops idle connections
	creds, err := o.Credentials(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	rr, err := repo.Open(ctx, st, creds)
	if err != nil {
		tb.Fatal(err)
	}
	r := checktest.Writer(tb, st, rr)
	list, _, err := r.Snapshots(ctx)
	if err != nil || len(list) != 1 {
		tb.Fatalf("snapshots before copying: %v, %v", list, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n - 1 {
		g.Go(func() error {
			s := *list[0].Snapshot
			s.Hostname = fmt.Sprintf("host-%02d", i%100)
			s.Source = fmt.Sprintf("local:/srv/%03d", i/100)
			s.Path = strings.TrimPrefix(s.Source, "local:")
			s.Time = s.Time.Add(-time.Duration(i+1) * time.Minute)
			_, err := r.SaveSnapshot(gctx, &s)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		tb.Fatal(err)
	}
}

// TestBackupSnapshotGets: finding a backup's parent in a repository of many
// snapshots on S3 costs one GET per snapshot once per host (a fresh
// metadata cache), and none on later backups: snapshots are immutable and
// named by their content, so the cached copies are kept.
func TestBackupSnapshotGets(t *testing.T) {
	s3test.Each(t, func(t *testing.T, srv s3test.Server) {
		const snapshots = 150
		o := s3Options(t, srv)
		initRepo(t, o)
		src := t.TempDir()
		checktest.WriteFile(t, src, "f", 1, 10<<10)
		opts := backup.Options{Path: src}
		backupCounted(t, o, t.TempDir(), opts)
		addSnapshots(t, o, snapshots-1)
		host := t.TempDir()
		if got, _ := backupCounted(t, o, host, opts); got.get(snapshotGets) < snapshots-1 {
			t.Errorf("first backup on a fresh host: %d snapshot GETs, want one per snapshot (%d)", got.get(snapshotGets), snapshots-1)
		}
		for i := range 2 {
			if got, _ := backupCounted(t, o, host, opts); got.get(snapshotGets) != 0 {
				t.Errorf("backup %d on the same host: %d snapshot GETs, want 0", i+2, got.get(snapshotGets))
			}
		}
		// Nor are the cached snapshots read: the cache's list of their heads
		// names the parent, the only one loaded (a GET once its copy is gone).
		cached, err := filepath.Glob(filepath.Join(host, "*", "snapshots"))
		if err != nil || len(cached) != 1 {
			t.Fatalf("cached snapshots of %s: %v, %v", host, cached, err)
		}
		if err := os.RemoveAll(cached[0]); err != nil {
			t.Fatal(err)
		}
		if got, _ := backupCounted(t, o, host, opts); got.get(snapshotGets) != 1 {
			t.Errorf("backup on the same host without the cached snapshots: %d snapshot GETs, want 1 (the parent)", got.get(snapshotGets))
		}
		if got, _ := backupCounted(t, o, t.TempDir(), opts); got.get(snapshotGets) < snapshots {
			t.Errorf("another fresh host: %d snapshot GETs, want %d", got.get(snapshotGets), snapshots)
		}
	})
}

// s3Options are the options of a repository under a fresh prefix of the S3
// test server srv, removed at the end of the test.
func s3Options(t testing.TB, srv s3test.Server) operation.Options {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	prefix := "op-" + hex.EncodeToString(b)
	srv.RemoveAtCleanup(t, prefix)
	o := options("")
	o.Store = operation.StoreOptions{URI: "s3:" + srv.Bucket + "/" + prefix, S3: s3.Config{Endpoint: srv.Endpoint,
		Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
	return o
}
