package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/local"
)

// Environment of the stress helper process.
const (
	stressDirEnv   = "CLOUDSTIC_LOCK_STRESS_DIR"
	stressProcEnv  = "CLOUDSTIC_LOCK_STRESS_PROC"
	stressProcs    = 3  // helper processes
	stressWorkers  = 4  // goroutines per process (and in the test itself)
	stressPerWorkr = 64 // acquisitions per goroutine: 16*64 = 1024
)

// TestStress contends for the lock from goroutines of this process and of
// helper processes on one local store. Each holder appends "+K id" after
// acquiring and "-K id" before releasing to one O_APPEND log; replaying the
// log must never show an exclusive holding overlapping any other.
func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test skipped in -short mode")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "holdings.log")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	for i := range stressProcs {
		cmd := exec.Command(exe, "-test.run=^TestStressHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), stressDirEnv+"="+dir, stressProcEnv+"="+strconv.Itoa(i+1))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	conflicts, err := stressWorkersRun(dir, 0)
	if err != nil {
		t.Error(err)
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process %d: %v", i+1, err)
		}
	}
	holdings := checkLog(t, logPath)
	t.Logf("%d holdings, %d conflicts seen in this process", holdings, conflicts)
	if want := (stressProcs + 1) * stressWorkers * stressPerWorkr; holdings != want {
		t.Errorf("%d holdings in the log, want %d", holdings, want)
	}
}

// TestStressHelper is the helper process's body; it does nothing in a normal
// test run.
func TestStressHelper(t *testing.T) {
	dir := os.Getenv(stressDirEnv)
	if dir == "" {
		t.Skip("helper for TestStress")
	}
	proc, _ := strconv.Atoi(os.Getenv(stressProcEnv)) // set by TestStress; 0 would still work
	if _, err := stressWorkersRun(dir, proc); err != nil {
		t.Fatal(err)
	}
}

// stressWorkersRun runs stressWorkers goroutines of process proc.
func stressWorkersRun(dir string, proc int) (int64, error) {
	st := local.New(filepath.Join(dir, "repo"))
	logf, err := os.OpenFile(filepath.Join(dir, "holdings.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, stressWorkers)
	for w := range stressWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = stressWorker(st, logf, proc, w, &conflicts)
		}()
	}
	wg.Wait()
	// O_APPEND writes are unbuffered: Close reports what a write has not.
	return conflicts.Load(), errors.Join(append(errs, logf.Close())...)
}

func stressWorker(st *local.Store, logf *os.File, proc, w int, conflicts *atomic.Int64) error {
	ctx := context.Background()
	opts := Options{Hostname: fmt.Sprintf("stress-%d", proc), PID: w + 1}
	id := fmt.Sprintf("%d.%d", proc, w)
	for done := 0; done < stressPerWorkr; {
		shared := mrand.IntN(4) != 0
		var l *Lock
		var err error
		if shared {
			l, err = AcquireShared(ctx, st, "backup", opts)
		} else {
			l, err = AcquireExclusive(ctx, st, "prune", opts)
		}
		if errors.Is(err, ErrLocked) {
			conflicts.Add(1)
			time.Sleep(time.Duration(mrand.IntN(2000)) * time.Microsecond)
			continue
		}
		if err != nil {
			return fmt.Errorf("worker %s: %w", id, err)
		}
		kind := map[bool]string{true: "S", false: "E"}[shared]
		if _, err := fmt.Fprintf(logf, "+%s %s\n", kind, id); err != nil {
			return err
		}
		time.Sleep(time.Duration(mrand.IntN(500)) * time.Microsecond) // hold it a little
		if _, err := fmt.Fprintf(logf, "-%s %s\n", kind, id); err != nil {
			return err
		}
		if err := l.Release(ctx); err != nil {
			return fmt.Errorf("worker %s: %w", id, err)
		}
		done++
	}
	return nil
}

// checkLog replays the holdings log and returns how many holdings it saw.
func checkLog(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	active := map[string]int{}
	holdings := 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		rec := sc.Text()
		switch {
		case strings.HasPrefix(rec, "+E"):
			if active["E"] > 0 || active["S"] > 0 {
				t.Errorf("line %d: %q while %d exclusive and %d shared held", line, rec, active["E"], active["S"])
			}
			active["E"]++
			holdings++
		case strings.HasPrefix(rec, "+S"):
			if active["E"] > 0 {
				t.Errorf("line %d: %q while exclusive held", line, rec)
			}
			active["S"]++
			holdings++
		case strings.HasPrefix(rec, "-E"):
			active["E"]--
		case strings.HasPrefix(rec, "-S"):
			active["S"]--
		default:
			t.Fatalf("line %d: bad record %q", line, rec)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return holdings
}
