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
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/sftp"
)

// The lock's behaviour depends on what each store can do atomically, so the
// conflict table and a contended run are repeated on every real backend:
// the local store, the S3 server (conditional writes), the same server
// without them (the B2 path: write, settle, verify) and the SFTP server
// (create-if-absent only). Servers come from scripts/s3-server.sh and
// scripts/sftp-server.sh.

type backend struct {
	name string
	open func(t *testing.T) store.Store
	// rounds of the contended test: the fallback path waits SettleDelay on
	// every exclusive acquire, so it gets fewer.
	rounds int
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

func openS3(t *testing.T, flavor s3.Flavor) store.Store {
	needServer(t, "S3_TEST_ENDPOINT", "S3_TEST_BUCKET")
	st, err := s3.Open(context.Background(), s3.Config{
		Bucket: os.Getenv("S3_TEST_BUCKET"), Prefix: "locktest-" + randName(), Endpoint: os.Getenv("S3_TEST_ENDPOINT"),
		Region: os.Getenv("S3_TEST_REGION"), AccessKey: os.Getenv("S3_TEST_ACCESS_KEY_ID"),
		SecretKey: os.Getenv("S3_TEST_SECRET_ACCESS_KEY"), Flavor: flavor,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func openSFTP(t *testing.T) store.Store {
	needServer(t, "SFTP_TEST_HOST", "SFTP_TEST_PORT", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	port, err := strconv.Atoi(os.Getenv("SFTP_TEST_PORT"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sftp.Open(context.Background(), sftp.Config{
		User: os.Getenv("SFTP_TEST_USER"), Host: os.Getenv("SFTP_TEST_HOST"), Port: port,
		Path: os.Getenv("SFTP_TEST_PATH") + "/locktest-" + randName(), KeyFile: os.Getenv("SFTP_TEST_KEY"),
		KnownHostsFile: os.Getenv("SFTP_TEST_KNOWN_HOSTS"), CreateDir: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func backends() []backend {
	return []backend{
		{"local", func(t *testing.T) store.Store { return local.New(t.TempDir()) }, 300},
		{"s3", func(t *testing.T) store.Store { return openS3(t, s3.FlavorS3) }, 180},
		{"s3-without-conditional-writes", func(t *testing.T) store.Store { return openS3(t, s3.FlavorB2) }, 12},
		{"sftp", openSFTP, 180},
	}
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
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			defer st.Close()
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

func TestBackendsContended(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			defer st.Close()
			var h holdings
			var wg sync.WaitGroup
			const workers = 6
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rnd := mrand.New(mrand.NewPCG(uint64(w), 7))
					for range b.rounds / workers {
						exclusive := rnd.IntN(3) == 0
						acquire := lock.AcquireShared
						if exclusive {
							acquire = lock.AcquireExclusive
						}
						l, err := acquire(ctx, st, "stress", lock.Options{})
						if errors.Is(err, lock.ErrLocked) {
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
						if err := l.Release(ctx); err != nil {
							t.Errorf("worker %d: release: %v", w, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("%d grants", h.grants)
			if h.violations != 0 {
				t.Fatalf("%d overlapping holdings the lock should have prevented", h.violations)
			}
			if h.grants == 0 {
				t.Fatal("no acquisition succeeded: the test proved nothing")
			}
		})
	}
}
