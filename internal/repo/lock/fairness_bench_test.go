package lock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// BenchmarkLockFairness is issue 31's fairness run: LOCKBENCH_FAIR_HOSTS
// hosts (default 50) back up in overlapping loops for
// LOCKBENCH_FAIR_SECONDS (default 300) on the S3 test server, each round
// a shared lock taken with -lock-wait (Wait) and held 2-20 s, then a pause
// of 0-1 s, so that some backup always holds the lock; a prune takes the
// exclusive lock with -lock-wait every LOCKBENCH_FAIR_PRUNE_EVERY seconds
// (default 60, the first at half of it) and holds it 5 s. Each host is a
// goroutine with its own S3 client and connections, named host01... as
// its own machine would be. It logs one row per prune: its wait against
// the bound of docs/lock.md ("Bound for a prune": the longest hold, from
// the prune's start, of the shared holders it waited for, plus one
// RefreshInterval), and how many of those began after the prune (and how
// long after); and reports the backups' waits
// (median, worst) and violations (an exclusive holder overlapping any
// other holder, counted as BenchmarkLockContention does), which must be
// 0. scripts/lockbench.sh runs it; it is a measurement, not a test.
func BenchmarkLockFairness(b *testing.B) {
	endpoint, bucket := os.Getenv("S3_TEST_ENDPOINT"), os.Getenv("S3_TEST_BUCKET")
	if endpoint == "" || bucket == "" {
		b.Skip(`S3 test server not configured: eval "$(scripts/s3-server.sh)"`)
	}
	hosts := envInt("LOCKBENCH_FAIR_HOSTS", 50)
	length := time.Duration(envInt("LOCKBENCH_FAIR_SECONDS", 300)) * time.Second
	every := time.Duration(envInt("LOCKBENCH_FAIR_PRUNE_EVERY", 60)) * time.Second
	for range b.N {
		prefix := randomPrefix(b)
		if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
			b.Cleanup(func() { _ = os.RemoveAll(filepath.Join(data, bucket, prefix)) }) // best effort
		}
		cfg := s3.Config{Bucket: bucket, Prefix: prefix, Endpoint: endpoint, Region: os.Getenv("S3_TEST_REGION"),
			AccessKey: os.Getenv("S3_TEST_ACCESS_KEY_ID"), SecretKey: os.Getenv("S3_TEST_SECRET_ACCESS_KEY"), MaxConnections: 2}
		f := runFairness(b, cfg, hosts, length, every)
		f.report(b)
	}
}

// hold is one acquisition: when it began to acquire, when it held the
// lock, and when its release returned.
type hold struct {
	begin, acquired, released time.Time
}

// fairness collects the fairness run's holds.
type fairness struct {
	contention
	holdsMu         sync.Mutex
	backups, prunes []hold
	lost            int
}

func (f *fairness) add(h hold, exclusive bool) {
	f.holdsMu.Lock()
	defer f.holdsMu.Unlock()
	if exclusive {
		f.prunes = append(f.prunes, h)
	} else {
		f.backups = append(f.backups, h)
	}
}

func runFairness(b *testing.B, cfg s3.Config, hosts int, length, every time.Duration) *fairness {
	ctx := context.Background()
	f := &fairness{}
	stores := make([]*wrap.Logging, hosts+1) // the last one is the prune's
	for i := range stores {
		st, err := s3.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		stores[i] = wrap.NewLogging(st, nil)
	}
	b.ResetTimer()
	start := time.Now()
	end := start.Add(length)
	var wg sync.WaitGroup
	for i, st := range stores[:hosts] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("host%02d", i+1)
			for time.Now().Before(end) {
				f.round(ctx, st, false, name, time.Duration(2000+rand.IntN(18000))*time.Millisecond)
				pause(ctx, time.Duration(rand.IntN(1000))*time.Millisecond)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for next := start.Add(every / 2); next.Before(end); next = next.Add(every) {
			pause(ctx, time.Until(next))
			f.round(ctx, stores[hosts], true, "pruner", 5*time.Second)
		}
	}()
	wg.Wait()
	b.StopTimer()
	for _, st := range stores {
		f.requests.Add(st.Counts().Requests)
		_ = st.Close() // only drops idle connections
	}
	return f
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// round takes the lock with -lock-wait, checks that no conflicting holder
// exists while it is held, holds it for d and releases it.
func (f *fairness) round(ctx context.Context, st *wrap.Logging, exclusive bool, host string, d time.Duration) {
	acquire, held, other := AcquireShared, &f.sharedHeld, &f.exclHeld
	if exclusive {
		acquire, held, other = AcquireExclusive, &f.exclHeld, &f.sharedHeld
	}
	h := hold{begin: time.Now()}
	l, err := acquire(ctx, st, "bench", Options{Wait: 10 * time.Minute, Hostname: host, PID: 1})
	if err != nil {
		f.fail(fmt.Errorf("%s: acquire: %w", host, err))
		return
	}
	h.acquired = time.Now()
	if n := held.Add(1); other.Load() != 0 || (exclusive && n != 1) {
		f.violations.Add(1)
	}
	select {
	case <-time.After(d):
	case <-l.Context().Done():
		f.holdsMu.Lock()
		f.lost++
		f.holdsMu.Unlock()
	}
	held.Add(-1)
	if err := l.Release(ctx); err != nil {
		f.fail(fmt.Errorf("%s: release: %w", host, err))
	}
	h.released = time.Now()
	f.add(h, exclusive)
}

// report logs one row per prune and the metrics of the run.
func (f *fairness) report(b *testing.B) {
	met := 0
	for i, p := range f.prunes {
		// The shared holders a prune waits for: those that held the lock
		// while it waited, whether they began to acquire before it
		// (holding, or queued before it) or after it ("late": queued
		// before it by the store's clock, whose estimates differ by up to
		// its 1 s resolution, or in before its queue entry and intent
		// were written). The late ones are counted apart: a prune
		// overtaken by backups that began long after it would be starved,
		// whatever the bound says.
		var longest time.Duration
		late, lateMax := 0, time.Duration(0)
		for _, s := range f.backups {
			if !s.released.After(p.begin) || !s.acquired.Before(p.acquired) {
				continue // over before the prune began, or after it (queued behind it)
			}
			longest = max(longest, s.released.Sub(p.begin))
			if !s.begin.Before(p.begin) {
				late++
				lateMax = max(lateMax, s.begin.Sub(p.begin))
			}
		}
		wait, bound := p.acquired.Sub(p.begin), longest+DefaultRefreshInterval
		verdict := "met"
		if wait <= bound {
			met++
		} else {
			verdict = "NOT met"
		}
		lateText := "0"
		if late > 0 {
			lateText = fmt.Sprintf("%d (began at most %d ms after the prune)", late, lateMax.Milliseconds())
		}
		b.Logf("row: | %d | %.1f s | %.1f s | %.1f s | %s | %.1f s | %s |",
			i+1, wait.Seconds(), longest.Seconds(), bound.Seconds(), verdict, (bound - wait).Seconds(), lateText)
	}
	waits := make([]time.Duration, len(f.backups))
	for i, s := range f.backups {
		waits[i] = s.acquired.Sub(s.begin)
	}
	slices.Sort(waits)
	if len(waits) == 0 {
		waits = []time.Duration{0}
	}
	b.ReportMetric(float64(len(f.prunes)), "prunes")
	b.ReportMetric(float64(met), "bound-met")
	b.ReportMetric(float64(len(f.backups)), "backups")
	b.ReportMetric(waits[len(waits)/2].Seconds()*1000, "backup-median-ms")
	b.ReportMetric(waits[len(waits)*95/100].Seconds()*1000, "backup-p95-ms")
	b.ReportMetric(waits[len(waits)-1].Seconds()*1000, "backup-worst-ms")
	b.ReportMetric(float64(f.requests.Load()), "requests")
	b.ReportMetric(float64(f.failed.Load()), "failed")
	b.ReportMetric(float64(f.lost), "leases-lost")
	b.ReportMetric(float64(f.violations.Load()), "violations")
	for _, err := range f.errs {
		b.Logf("failed: %v", err)
	}
	if f.violations.Load() != 0 {
		b.Errorf("%d violations", f.violations.Load())
	}
}
