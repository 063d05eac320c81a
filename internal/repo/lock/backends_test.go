package lock_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
	"github.com/cloudstic/cloudstic/internal/store/sftp"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// The lock's behaviour depends on what each store can do atomically, so the
// conflict table and a contended run are repeated on every real backend and
// every protocol it can run: the local store and each S3 server (versitygw
// and a SeaweedFS cluster) with both conditional writes, with
// create-if-absent only and with neither (declared by wrap.Limit, as
// `-s3-conditional-writes` does), each S3 server as B2 (versioned lock keys,
// no conditional writes), the SFTP server (create-if-absent only), and the
// local and S3 stores behind the fault wrapper with delayed and duplicated
// requests. Servers come from scripts/s3-server.sh,
// scripts/seaweedfs-server.sh and scripts/sftp-server.sh.

type backend struct {
	name string
	open func(t *testing.T) store.Store
	// attempts of the contended test (acquisitions tried, prunes and
	// backups mixed)
	attempts int
	// opts for the contended test: the fault variants use a short TTL, so
	// that an intent or shared key resurrected by a late duplicate blocks
	// the others for 16 s instead of a minute.
	opts lock.Options
}

var (
	createOnly = store.Capabilities{CreateIfAbsent: true}
	neither    = store.Capabilities{}
	// shortLease keeps the lease rules (docs/lock.md, "Time") with a 16 s
	// TTL. Its 2 s request timeout is the longest those rules allow: a
	// loaded CI machine has kept one GET on the local S3 server past 1 s.
	shortLease = lock.Options{TTL: 16 * time.Second, SafetyMargin: 10 * time.Second, MaxClockSkew: time.Second,
		RequestTimeout: 2 * time.Second, RefreshInterval: time.Second, RetryInterval: 500 * time.Millisecond,
		ContentionWait: 2 * time.Second}
	// delays and late duplicates, no failures: every lost request would
	// only leave a key behind for a TTL.
	faults = fault.Config{Seed: 1, LatencyRate: 0.3, Latency: 20 * time.Millisecond, DupRate: 0.003}
)

func limited(open func(t *testing.T) store.Store, caps store.Capabilities) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store { return wrap.Limit(open(t), caps) }
}

func faulty(open func(t *testing.T) store.Store) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store { return fault.New(open(t), faults) }
}

func needServer(t *testing.T, vars ...string) {
	t.Helper()
	for _, v := range vars {
		if os.Getenv(v) != "" {
			continue
		}
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skipf("%s unset and CLOUDSTIC_TEST_NO_SERVERS=1", v)
		}
		t.Fatalf("%s unset: start the test servers with eval \"$(scripts/s3-server.sh)\"; eval \"$(scripts/sftp-server.sh)\"", v)
	}
}

func randName() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

func openS3(t *testing.T, srv s3test.Server, flavor s3.Flavor) store.Store {
	prefix := "locktest-" + randName()
	st, err := s3.Open(context.Background(), s3.Config{
		Bucket: srv.Bucket, Prefix: prefix, Endpoint: srv.Endpoint, Region: srv.Region,
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Flavor: flavor,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.RemoveAtCleanup(t, prefix)
	return st
}

func openSFTP(t *testing.T) store.Store {
	needServer(t, "SFTP_TEST_HOST", "SFTP_TEST_PORT", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	port, err := strconv.Atoi(os.Getenv("SFTP_TEST_PORT"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sftp.Open(context.Background(), sftp.Config{
		Config: sshconn.Config{User: os.Getenv("SFTP_TEST_USER"), Host: os.Getenv("SFTP_TEST_HOST"), Port: port,
			KeyFile: os.Getenv("SFTP_TEST_KEY"), KnownHostsFile: os.Getenv("SFTP_TEST_KNOWN_HOSTS")},
		Path: os.Getenv("SFTP_TEST_PATH") + "/locktest-" + randName(), CreateDir: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// backends are the stores of one machine: the local store and the SFTP
// server.
func backends() []backend {
	openLocal := func(t *testing.T) store.Store { return local.New(t.TempDir()) }
	return []backend{
		{"local", openLocal, 1000, lock.Options{}},
		{"local-create-only", limited(openLocal, createOnly), 1000, lock.Options{}},
		{"local-neither", limited(openLocal, neither), 1000, lock.Options{}},
		{"sftp", openSFTP, 1000, lock.Options{}},
		{"local-delayed-duplicated", faulty(openLocal), 600, shortLease},
	}
}

// s3Backends are the protocols the lock can run on one S3 test server.
func s3Backends(srv s3test.Server) []backend {
	openS3Store := func(t *testing.T) store.Store { return openS3(t, srv, s3.FlavorS3) }
	return []backend{
		{"s3", openS3Store, 1000, lock.Options{}},
		{"s3-create-only", limited(openS3Store, createOnly), 1000, lock.Options{}},
		{"s3-neither", limited(openS3Store, neither), 1000, lock.Options{}},
		{"s3-as-b2", func(t *testing.T) store.Store { return openS3(t, srv, s3.FlavorB2) }, 1000, lock.Options{}},
		{"s3-neither-delayed-duplicated", faulty(limited(openS3Store, neither)), 600, shortLease},
	}
}

// eachBackend runs fn on every backend: those of this machine one after
// the other, then each S3 test server's (subtests named by the server, in
// parallel with the other server's).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
	s3test.Each(t, func(t *testing.T, srv s3test.Server) {
		for _, b := range s3Backends(srv) {
			t.Run(b.name, func(t *testing.T) { fn(t, b) })
		}
	})
}

func TestBackendsConflictTable(t *testing.T) {
	ctx := context.Background()
	type step struct {
		exclusive bool
		wantErr   bool
	}
	rows := []struct {
		name  string
		steps []step
	}{
		{"shared+shared", []step{{false, false}, {false, false}}},
		{"shared blocks exclusive", []step{{false, false}, {true, true}}},
		{"exclusive blocks shared", []step{{true, false}, {false, true}}},
		{"exclusive blocks exclusive", []step{{true, false}, {true, true}}},
	}
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		t.Cleanup(func() {
			if err := st.Close(); err != nil {
				t.Error(err)
			}
		})
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				var held []*lock.Lock
				for i, s := range row.steps {
					acquire := lock.AcquireShared
					if s.exclusive {
						acquire = lock.AcquireExclusive
					}
					l, err := acquire(ctx, st, fmt.Sprintf("step%d", i), lock.Options{})
					if s.wantErr {
						if !errors.Is(err, lock.ErrLocked) {
							t.Fatalf("step %d: got %v, want ErrLocked", i, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					held = append(held, l)
				}
				for _, l := range held {
					if err := l.Release(ctx); err != nil {
						t.Fatal(err)
					}
				}
				left, err := lock.List(ctx, st, lock.Options{})
				if err != nil || len(left) != 0 {
					t.Fatalf("after release: %d locks left (%v)", len(left), err)
				}
			})
		}
	})
}

// holdings counts current holders and records any overlap the lock should
// have prevented.
type holdings struct {
	mu         sync.Mutex
	shared     int
	exclusive  int
	violations int
	grants     int
}

func (h *holdings) enter(exclusive bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grants++
	if exclusive {
		if h.shared > 0 || h.exclusive > 0 {
			h.violations++
		}
		h.exclusive++
		return
	}
	if h.exclusive > 0 {
		h.violations++
	}
	h.shared++
}

func (h *holdings) leave(exclusive bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if exclusive {
		h.exclusive--
	} else {
		h.shared--
	}
}

// TestBackendsContended: six goroutines contend for the lock on each
// backend, a third of the attempts exclusive (prune), the rest shared
// (backup); every holder stays inside its interval for up to 3 ms, and any
// overlap the lock should have prevented is counted. It must be zero.
func TestBackendsContended(t *testing.T) {
	ctx := context.Background()
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t)
		var h holdings
		var wg sync.WaitGroup
		var locked, lost, timedOut atomic.Int64
		const workers = 6
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := mrand.New(mrand.NewPCG(uint64(w), 7))
				for range b.attempts / workers {
					exclusive := rnd.IntN(3) == 0
					acquire := lock.AcquireShared
					if exclusive {
						acquire = lock.AcquireExclusive
					}
					l, err := acquire(ctx, st, "stress", b.opts)
					if errors.Is(err, lock.ErrLocked) {
						locked.Add(1)
						continue
					}
					if errors.Is(err, context.DeadlineExceeded) {
						// A request past RequestTimeout fails the
						// acquire, as it should; counted below.
						timedOut.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					// Hold it briefly, so that a holder the lock failed to
					// exclude would be caught inside the interval.
					h.enter(exclusive)
					<-time.After(time.Duration(rnd.IntN(3000)) * time.Microsecond)
					h.leave(exclusive)
					if err := l.Release(ctx); errors.Is(err, lock.ErrLeaseLost) {
						lost.Add(1)
					} else if errors.Is(err, context.DeadlineExceeded) {
						timedOut.Add(1)
					} else if err != nil {
						t.Errorf("worker %d: release: %v", w, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
		t.Logf("%d attempts: %d grants, %d refused (locked), %d timed out, %d leases lost, %d overlaps",
			b.attempts/workers*workers, h.grants, locked.Load(), timedOut.Load(), lost.Load(), h.violations)
		if h.violations != 0 {
			t.Fatalf("%d overlapping holdings the lock should have prevented", h.violations)
		}
		if n := timedOut.Load(); n > int64(b.attempts/20) {
			t.Fatalf("%d of %d acquires timed out: more than a loaded machine explains", n, b.attempts)
		}
		if h.grants < b.attempts/10 {
			t.Fatalf("only %d of %d attempts succeeded: the test proved little", h.grants, b.attempts)
		}
	})
}
