package lock

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// BenchmarkLockContention: LOCKBENCH_SHARED clients (default 200) take the
// shared lock LOCKBENCH_ROUNDS times each (default 3), holding it 0-50 ms,
// while LOCKBENCH_EXCLUSIVE clients (default 5) take the exclusive lock
// twice each, holding it 100 ms, on the S3 test server
// (scripts/s3-server.sh). Each client has its own S3 client and
// connections, as separate processes would. It reports the median and
// worst time to acquire of each kind, the store requests in all, and
// violations (an exclusive holder overlapping any other holder), which
// must be 0. scripts/lockbench.sh runs it; it is a measurement, not a
// test, and asserts only that there were no violations.
func BenchmarkLockContention(b *testing.B) {
	endpoint, bucket := os.Getenv("S3_TEST_ENDPOINT"), os.Getenv("S3_TEST_BUCKET")
	if endpoint == "" || bucket == "" {
		b.Skip(`S3 test server not configured: eval "$(scripts/s3-server.sh)"`)
	}
	nShared, nExcl, rounds := envInt("LOCKBENCH_SHARED", 200), envInt("LOCKBENCH_EXCLUSIVE", 5), envInt("LOCKBENCH_ROUNDS", 3)
	for range b.N {
		prefix := randomPrefix(b)
		if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
			b.Cleanup(func() { _ = os.RemoveAll(filepath.Join(data, bucket, prefix)) }) // best effort
		}
		cfg := s3.Config{Bucket: bucket, Prefix: prefix, Endpoint: endpoint, Region: os.Getenv("S3_TEST_REGION"),
			AccessKey: os.Getenv("S3_TEST_ACCESS_KEY_ID"), SecretKey: os.Getenv("S3_TEST_SECRET_ACCESS_KEY"), MaxConnections: 2}
		r := runContention(b, cfg, nShared, nExcl, rounds)
		b.ReportMetric(r.median(r.shared).Seconds()*1000, "shared-median-ms")
		b.ReportMetric(slices.Max(r.shared).Seconds()*1000, "shared-worst-ms")
		b.ReportMetric(r.median(r.exclusive).Seconds()*1000, "excl-median-ms")
		b.ReportMetric(slices.Max(r.exclusive).Seconds()*1000, "excl-worst-ms")
		b.ReportMetric(float64(r.requests.Load()), "requests")
		b.ReportMetric(float64(r.failed.Load()), "failed")
		b.ReportMetric(float64(r.violations.Load()), "violations")
		for _, err := range r.errs {
			b.Logf("failed: %v", err)
		}
		if r.violations.Load() != 0 {
			b.Errorf("%d violations", r.violations.Load())
		}
	}
}

// contention collects the clients' measurements.
type contention struct {
	mu                   sync.Mutex
	shared, exclusive    []time.Duration
	sharedHeld, exclHeld atomic.Int64
	requests, violations atomic.Int64
	failed               atomic.Int64
	errs                 []error // the failures, for the log
}

// fail counts a failed acquisition or release and keeps its error.
func (c *contention) fail(err error) {
	c.failed.Add(1)
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

func (c *contention) median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func runContention(b *testing.B, cfg s3.Config, nShared, nExcl, rounds int) *contention {
	ctx := context.Background()
	c := &contention{}
	stores := make([]*wrap.Logging, nShared+nExcl)
	for i := range stores {
		st, err := s3.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		stores[i] = wrap.NewLogging(st, nil)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, st := range stores {
		exclusive := i >= nShared
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, hold := rounds, func() time.Duration { return time.Duration(rand.IntN(50)) * time.Millisecond }
			if exclusive {
				n, hold = 2, func() time.Duration { return 100 * time.Millisecond }
			}
			for range n {
				c.round(ctx, st, exclusive, hold(), i)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	for _, st := range stores {
		c.requests.Add(st.Counts().Requests)
		_ = st.Close() // only drops idle connections
	}
	return c
}

// round takes the lock once, checks that no conflicting holder exists
// while it is held, and releases it.
func (c *contention) round(ctx context.Context, st *wrap.Logging, exclusive bool, hold time.Duration, pid int) {
	acquire, held, other := AcquireShared, &c.sharedHeld, &c.exclHeld
	if exclusive {
		acquire, held, other = AcquireExclusive, &c.exclHeld, &c.sharedHeld
	}
	t0 := time.Now()
	l, err := acquire(ctx, st, "bench", Options{Wait: 10 * time.Minute, PID: pid, Hostname: "bench"})
	if err != nil {
		c.fail(fmt.Errorf("acquire: %w", err))
		return
	}
	took := time.Since(t0)
	if n := held.Add(1); other.Load() != 0 || (exclusive && n != 1) {
		c.violations.Add(1)
	}
	c.mu.Lock()
	if exclusive {
		c.exclusive = append(c.exclusive, took)
	} else {
		c.shared = append(c.shared, took)
	}
	c.mu.Unlock()
	select {
	case <-time.After(hold):
	case <-l.Context().Done():
	}
	held.Add(-1)
	if err := l.Release(ctx); err != nil {
		c.fail(fmt.Errorf("release: %w", err))
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func randomPrefix(b *testing.B) string {
	buf := make([]byte, 6)
	if _, err := crand.Read(buf); err != nil {
		b.Fatal(err)
	}
	return "lockbench-" + hex.EncodeToString(buf)
}
