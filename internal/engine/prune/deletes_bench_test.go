package prune_test

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// BenchmarkPruneDeletes: a prune that deletes PRUNEBENCH_PACKS unused
// packs (default 5,000) on the S3 test server (S3_TEST_ENDPOINT, which may
// be a proxy in front of it), once with a lease check before every delete,
// one at a time (batch1: DeleteBatch 1, how prune deleted before issue 31)
// and once with the default batches (64 per check, 8 in flight). It
// reports the store requests of the prune (lock excluded) per deleted
// object and its wall time. The packs are written straight to the store,
// as no index file names them (a crashed backup's orphans: the delete
// phase is the same as for packs of forgotten snapshots, which would add
// a few index requests). scripts/prunebench.sh runs it; a measurement,
// not a test: it fails only if a pack is left.
func BenchmarkPruneDeletes(b *testing.B) {
	endpoint, bucket := os.Getenv("S3_TEST_ENDPOINT"), os.Getenv("S3_TEST_BUCKET")
	if endpoint == "" || bucket == "" {
		b.Skip(`S3 test server not configured: eval "$(scripts/s3-server.sh)"`)
	}
	packs := 5000
	if n, err := strconv.Atoi(os.Getenv("PRUNEBENCH_PACKS")); err == nil && n > 0 {
		packs = n
	}
	for _, tc := range []struct {
		name  string
		batch int
	}{{"batch1", 1}, {"default", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				st := orphanRepo(b, endpoint, bucket, packs)
				b.StartTimer()
				requests, took := pruneCounted(b, st, tc.batch, packs)
				b.ReportMetric(float64(requests)/float64(packs), "requests/object")
				b.ReportMetric(float64(requests), "requests")
				b.ReportMetric(took.Seconds(), "wall-s")
			}
		})
	}
}

// orphanRepo creates a repository under a fresh prefix of the bucket with
// n packs that no index file names, written 16 at a time.
func orphanRepo(b *testing.B, endpoint, bucket string, n int) store.Store {
	ctx := context.Background()
	buf := make([]byte, 6)
	if _, err := crand.Read(buf); err != nil {
		b.Fatal(err)
	}
	prefix := "prunebench-" + hex.EncodeToString(buf)
	if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
		b.Cleanup(func() { _ = os.RemoveAll(filepath.Join(data, bucket, prefix)) }) // best effort
	}
	st, err := s3.Open(ctx, s3.Config{Bucket: bucket, Prefix: prefix, Endpoint: endpoint, Region: os.Getenv("S3_TEST_REGION"),
		AccessKey: os.Getenv("S3_TEST_ACCESS_KEY_ID"), SecretKey: os.Getenv("S3_TEST_SECRET_ACCESS_KEY")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{PlatformKey: checktest.Key}}); err != nil {
		b.Fatal(err)
	}
	keys := make(chan string)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				if _, err := st.Put(ctx, k, []byte("not a pack: prune deletes it unread"), store.PutOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range n {
		var p id.ID
		if _, err := crand.Read(p[:]); err != nil {
			b.Fatal(err)
		}
		select {
		case keys <- repo.PackKey(p):
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(keys)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	// The store stamps objects to the second and prune's start is a lower
	// bound of the store's time: the last packs are older than the start
	// of a prune with no margin only 2 s on.
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return st
}

// pruneCounted runs prune with no margin under the exclusive lock and
// returns the store requests and wall time of prune.Run alone.
func pruneCounted(b *testing.B, st store.Store, batch, want int) (int64, time.Duration) {
	ctx := context.Background()
	counted := wrap.NewLogging(st, nil)
	lease, err := lock.AcquireExclusive(ctx, counted, "prune", lock.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = lease.Release(ctx) }() // best effort: the prefix is removed anyway
	w, err := checktest.Open(b, counted).ExclusiveWriter(lease)
	if err != nil {
		b.Fatal(err)
	}
	before, t0 := counted.Counts().Requests, time.Now()
	res, err := prune.Run(ctx, w, prune.Options{DeleteBatch: batch})
	took, requests := time.Since(t0), counted.Counts().Requests-before
	if err != nil {
		b.Fatal(err)
	}
	if res.PacksDeleted != want {
		b.Fatalf("prune deleted %d packs, want %d", res.PacksDeleted, want)
	}
	return requests, took
}
