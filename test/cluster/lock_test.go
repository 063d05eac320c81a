package cluster

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/s3"
)

// stressLease keeps the lease rules (docs/lock.md, "Time") with a TTL short
// enough that a holder that could not release (its node was down) stops
// blocking the others within a test run.
func stressLease() lock.Options {
	return lock.Options{TTL: 30 * time.Second, SafetyMargin: 12 * time.Second, MaxClockSkew: 2 * time.Second,
		RequestTimeout: 4 * time.Second, RefreshInterval: 3 * time.Second, RetryInterval: time.Second,
		ContentionWait: 2 * time.Second}
}

// stress is the state the contending goroutines share.
type stress struct {
	mu         sync.Mutex
	shared     int // current shared holders
	exclusive  int // current exclusive holders
	violations int // holdings that overlapped one they should have excluded
	grants     int
	// attempts, refusals (ErrLocked), failures (any other error: a request
	// that met the dead node), lost leases and failed releases.
	attempts, locked, failed, lost, unreleased atomic.Int64
	firstErrs                                  []error // the first few failures, for the log
}

// failure records err for the log (the first five of them).
func (s *stress) failure(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.firstErrs) < 5 {
		s.firstErrs = append(s.firstErrs, err)
	}
}

func (s *stress) enter(exclusive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants++
	if s.exclusive > 0 || exclusive && s.shared > 0 {
		s.violations++
	}
	if exclusive {
		s.exclusive++
	} else {
		s.shared++
	}
}

func (s *stress) leave(exclusive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if exclusive {
		s.exclusive--
	} else {
		s.shared--
	}
}

func (s *stress) granted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants
}

// worker contends for the lock until stop is closed, a third of its
// attempts exclusive.
func (s *stress) worker(st *s3.Store, seed uint64, stop <-chan struct{}) {
	ctx := context.Background()
	rnd := mrand.New(mrand.NewPCG(seed, 7))
	for {
		select {
		case <-stop:
			return
		default:
		}
		exclusive := rnd.IntN(3) == 0
		acquire := lock.AcquireShared
		if exclusive {
			acquire = lock.AcquireExclusive
		}
		s.attempts.Add(1)
		l, err := acquire(ctx, st, "stress", stressLease())
		switch {
		case errors.Is(err, lock.ErrLocked):
			s.locked.Add(1)
			continue
		case err != nil:
			s.failed.Add(1)
			s.failure(err)
			continue
		}
		s.enter(exclusive)
		<-time.After(time.Duration(rnd.IntN(3000)) * time.Microsecond)
		s.leave(exclusive)
		switch err := l.Release(ctx); {
		case errors.Is(err, lock.ErrLeaseLost):
			s.lost.Add(1)
		case err != nil:
			s.unreleased.Add(1)
			s.failure(err)
		}
	}
}

// outages are the node failures the tests inflict: one volume server of
// three, after which every object still has a copy and writes go to the two
// left; and two, after which writes fail (no two servers to hold the copies)
// and so do reads of the objects that had both copies on the dead ones.
func outages() []struct {
	name  string
	kills int
} {
	return []struct {
		name  string
		kills int
	}{{"one-of-three", 1}, {"two-of-three", 2}}
}

// TestLockSurvivesVolumeServerKill: six goroutines contend for the lock on
// the cluster, as TestBackendsContended does on one server; after 30 grants
// volume servers are killed with SIGKILL, and once 60 more acquisitions were
// tried they are restarted. Requests that meet a dead node may fail and
// their acquisitions or releases with them; what must hold is that no
// holding overlapped one the lock should have excluded, that the lock is
// granted again after the restart, and that once the keys of holders that
// could not release have expired an exclusive lock is granted.
func TestLockSurvivesVolumeServerKill(t *testing.T) {
	t.Parallel()
	for _, o := range outages() {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			lockStress(t, o.kills)
		})
	}
}

func lockStress(t *testing.T, kills int) {
	c := startCluster(t)
	ctx := context.Background()
	st, err := s3.Open(ctx, s3.Config{Bucket: c.srv.Bucket, Prefix: "lock-stress", Endpoint: c.srv.Endpoint,
		Region: c.srv.Region, AccessKey: c.srv.AccessKey, SecretKey: c.srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // only drops idle connections
	t.Logf("capabilities on the cluster: %+v", st.Capabilities())

	var s stress
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker(st, uint64(w), stop)
		}()
	}
	stopped := false
	stopWorkers := func() {
		if !stopped {
			close(stop)
			wg.Wait()
			stopped = true
		}
	}
	defer stopWorkers()

	// waitFor polls cond; the bound only keeps a wedged run from hanging.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(5 * time.Minute)
		for !cond() {
			select {
			case <-deadline:
				t.Fatalf("%s: not within 5 minutes (%d grants, %d attempts, %d failed)", what, s.granted(), s.attempts.Load(), s.failed.Load())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitFor("30 grants before the kill", func() bool { return s.granted() >= 30 })
	c.killVolumes(kills)
	downFrom, grantsBefore := s.attempts.Load(), s.granted()
	waitFor("60 attempts with nodes down", func() bool { return s.attempts.Load() >= downFrom+60 })
	grantsDown := s.granted() - grantsBefore
	c.restart()
	restartedAt := s.granted()
	waitFor("30 grants after the restart", func() bool { return s.granted() >= restartedAt+30 })
	stopWorkers()

	t.Logf("%d attempts: %d grants (%d while nodes were down), %d refused (locked), %d failed, %d leases lost, %d not released, %d overlaps",
		s.attempts.Load(), s.grants, grantsDown, s.locked.Load(), s.failed.Load(), s.lost.Load(), s.unreleased.Load(), s.violations)
	for _, err := range s.firstErrs {
		t.Logf("failed: %v", err)
	}
	if s.violations != 0 {
		t.Fatalf("%d overlapping holdings the lock should have prevented", s.violations)
	}
	// Keys left by holders that could not release expire a TTL after
	// their last write; then an exclusive lock is granted.
	wait := stressLease()
	wait.Wait = 3 * wait.TTL
	l, err := lock.AcquireExclusive(ctx, st, "final", wait)
	if err != nil {
		t.Fatalf("exclusive lock after the storm: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
