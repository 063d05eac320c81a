package operation_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/cache"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3"
)

// snapshotGets counts the Gets of snapshot objects that reach the store.
type snapshotGets struct {
	store.Store
	n *atomic.Int64
}

func (s snapshotGets) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, repo.SnapshotPrefix) {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key)
}

// TestBackupSnapshotGets: finding a backup's parent in a repository of many
// snapshots on S3 costs one GET per snapshot once per host (a fresh
// metadata cache), and none on later backups: snapshots are immutable and
// named by their content, so the cached copies are kept.
func TestBackupSnapshotGets(t *testing.T) {
	const snapshots = 150
	ctx := context.Background()
	o := s3Options(t)
	st, err := operation.OpenStore(ctx, o.Store)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{PlatformKey: checktest.Key}}); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 10<<10)
	backupWith := func(cacheDir string) int64 {
		var n atomic.Int64
		o := o
		o.Cache = &cache.Options{Dir: cacheDir}
		o.Store.TestWrapper = func(st store.Store) store.Store { return snapshotGets{st, &n} }
		r, err := operation.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close() //nolint:errcheck // only drops idle connections
		if _, err := operation.Backup(ctx, r, backup.Options{Path: src}, nil); err != nil {
			t.Fatal(err)
		}
		return n.Load()
	}
	backupWith(t.TempDir())
	// More snapshots of other sources, each a distinct object.
	r := checktest.Open(t, st)
	list, err := r.Snapshots(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("snapshots after one backup: %v, %v", list, err)
	}
	for i := range snapshots - 2 {
		s := *list[0].Snapshot
		s.Source = "other-" + string(rune('a'+i%26))
		s.Time = s.Time.Add(-time.Duration(i+1) * time.Minute)
		if _, err := r.SaveSnapshot(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
	host := t.TempDir()
	if got := backupWith(host); got < snapshots-1 {
		t.Errorf("first backup on a fresh host: %d snapshot GETs, want one per snapshot (%d)", got, snapshots-1)
	}
	for i := range 2 {
		if got := backupWith(host); got != 0 {
			t.Errorf("backup %d on the same host: %d snapshot GETs, want 0", i+2, got)
		}
	}
	if got := backupWith(t.TempDir()); got < snapshots {
		t.Errorf("another fresh host: %d snapshot GETs, want %d", got, snapshots)
	}
}

// s3Options are the options of a repository under a fresh prefix of the S3
// test server (scripts/s3-server.sh), removed at the end of the test.
func s3Options(t *testing.T) operation.Options {
	t.Helper()
	endpoint, bucket := os.Getenv("S3_TEST_ENDPOINT"), os.Getenv("S3_TEST_BUCKET")
	if endpoint == "" || bucket == "" {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("no S3 test server (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal(`S3 test server not configured: eval "$(scripts/s3-server.sh)"`)
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	prefix := "op-" + hex.EncodeToString(b)
	if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
		t.Cleanup(func() {
			if err := os.RemoveAll(filepath.Join(data, bucket, prefix)); err != nil {
				t.Error(err)
			}
		})
	}
	o := options("")
	o.Store = operation.StoreOptions{URI: "s3:" + bucket + "/" + prefix, S3: s3.Config{Endpoint: endpoint,
		Region: os.Getenv("S3_TEST_REGION"), AccessKey: os.Getenv("S3_TEST_ACCESS_KEY_ID"), SecretKey: os.Getenv("S3_TEST_SECRET_ACCESS_KEY")}}
	return o
}
