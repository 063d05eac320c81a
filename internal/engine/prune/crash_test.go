//go:build unix

package prune_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Environment of the helper process.
const (
	helperDirEnv  = "CLOUDSTIC_PRUNE_HELPER_DIR"
	helperKillEnv = "CLOUDSTIC_PRUNE_HELPER_KILL_AT"
)

// killStore SIGKILLs its own process just before its at-th write or delete
// (0: never), the way a crash or kill -9 stops prune mid-way.
type killStore struct {
	store.Store
	at int64
	n  atomic.Int64
}

func (k *killStore) maybeDie() {
	if k.n.Add(1) == k.at {
		// Error ignored: the next line is never reached when it succeeds.
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

func (k *killStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	k.maybeDie()
	return k.Store.Put(ctx, key, data, opts)
}

func (k *killStore) Delete(ctx context.Context, key string) error {
	k.maybeDie()
	return k.Store.Delete(ctx, key)
}

// TestPruneHelper is the child process of TestPruneKilled; it does nothing
// in a normal test run.
func TestPruneHelper(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestPruneKilled")
	}
	at, err := strconv.ParseInt(os.Getenv(helperKillEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ks := &killStore{Store: local.New(dir), at: at}
	r, err := repo.Open(context.Background(), ks, repo.Credentials{PlatformKey: checktest.Key})
	if err != nil {
		t.Fatal(err)
	}
	// The lock's writes count too: a kill may leave it behind, as a real
	// crash does.
	checktest.Locked(t, ks, true, func(lease *lock.Lock) {
		var w *repo.ExclusiveWriter
		if w, err = r.ExclusiveWriter(lease); err == nil {
			_, err = prune.Run(context.Background(), w, prune.Options{MaxUnused: 0.05})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ops=%d\n", ks.n.Load())
}

// runHelper prunes a copy of template in a child process, killed at the
// at-th store write or delete, or after delay when at is 0 and delay > 0.
func runHelper(t *testing.T, dir string, at int, delay time.Duration) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPruneHelper$", "-test.v")
	// A killed prune leaves its scratch index behind: in the test's own
	// temporary directory, not the machine's.
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperKillEnv+"="+strconv.Itoa(at), "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	if delay > 0 {
		select {
		case err = <-done:
		case <-time.After(delay):
			if kerr := cmd.Process.Kill(); kerr != nil {
				t.Logf("kill: %v", kerr) // it may have exited just now
			}
			err = <-done
		}
	} else {
		err = <-done
	}
	if at > 0 {
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("helper was not killed at op %d: %v\n%s", at, err, out.String())
		}
	} else if delay == 0 && err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	return out.String()
}

// TestPruneKilled kills prune at every store write or delete it makes,
// and after random short delays, and checks that each time the repository
// passes check, every snapshot restores byte for byte, and a second prune
// completes cleanly.
func TestPruneKilled(t *testing.T) {
	template := t.TempDir()
	st := checktest.NewRepo(t, template)
	srcs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for i, src := range srcs {
		checktest.WriteFile(t, src, "common", 1, 500<<10)
		checktest.WriteFile(t, src, "own", uint64(10+i), 1200<<10)
		checktest.WriteFile(t, src, "next", uint64(20+i), 500<<10)
		if i > 0 {
			checktest.WriteFile(t, src, "prev", uint64(20+i-1), 500<<10)
		}
	}
	var ids []id.ID
	for _, src := range srcs {
		ids = append(ids, checktest.Backup(t, st, src))
	}
	if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(context.Background(), ids[1]); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	copyRepo := func(name string) string {
		dst := filepath.Join(work, name)
		if err := os.CopyFS(dst, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	m := regexp.MustCompile(`ops=(\d+)`).FindStringSubmatch(runHelper(t, copyRepo("count"), 0, 0))
	if m == nil {
		t.Fatal("helper did not report its operation count")
	}
	total, _ := strconv.Atoi(m[1]) // matched \d+
	if total < 5 {
		t.Fatalf("prune made only %d writes and deletes: the test repository is too small", total)
	}
	type point struct {
		at    int
		delay time.Duration
	}
	var points []point
	for at := 1; at <= total; at++ {
		points = append(points, point{at: at})
	}
	for len(points) < total+max(10, 25-total) {
		points = append(points, point{delay: time.Duration(1+rand.IntN(40)) * time.Millisecond})
	}
	t.Logf("prune makes %d writes and deletes; killing it at %d points", total, len(points))
	for i, p := range points {
		dir := copyRepo(fmt.Sprint("run", i))
		runHelper(t, dir, p.at, p.delay)
		kst := local.New(dir)
		// The killed prune's lock, if left, would block the next one
		// for a minute: its holder is known dead.
		if _, err := lock.Break(context.Background(), kst, false, lock.Options{}); err != nil {
			t.Fatal(err)
		}
		mustCheck(t, kst)
		checktest.RestoreEqual(t, kst, ids[0], srcs[0])
		checktest.RestoreEqual(t, kst, ids[2], srcs[2])
		if _, err := pruneLocked(t, kst, checktest.Open(t, kst), prune.Options{MaxUnused: 0.05}); err != nil {
			t.Fatalf("point %+v: prune after the kill: %v", p, err)
		}
		mustCheck(t, kst)
		checktest.RestoreEqual(t, kst, ids[0], srcs[0])
		checktest.RestoreEqual(t, kst, ids[2], srcs[2])
		if t.Failed() {
			t.Fatalf("point %+v failed", p)
		}
	}
}
