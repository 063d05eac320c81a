package backup_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// errDown is the failure of a store that stopped answering (or of a
// process that died: nothing it sends arrives).
var errDown = errors.New("store down")

// How the interrupted run ends, once its store holds stopAfter packs.
const (
	// cancelled: the run's context is cancelled (Ctrl-C, SIGTERM).
	cancelled = iota
	// packsFail: every later pack upload fails (a store failure); the
	// store still takes index files.
	packsFail
	// killed: nothing reaches the store any more (kill -9, a power cut):
	// no last checkpoint.
	killed
)

// packLog counts the packs stored through it and, once stopAfter are
// stored, stops the run as mode says.
type packLog struct {
	store.Store
	mode      int
	stopAfter int // 0: never
	cancel    context.CancelFunc

	mu      sync.Mutex
	packs   []id.ID
	bytes   int64
	stopped bool
}

func (s *packLog) down(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped && (s.mode == killed || strings.HasPrefix(key, repo.DataPrefix)) {
		return fmt.Errorf("%s: %w", key, errDown)
	}
	return nil
}

// Put logs the packs stored and stops the run after stopAfter of them.
func (s *packLog) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if err := s.down(key); err != nil {
		return store.ObjectInfo{}, err
	}
	info, err := s.Store.Put(ctx, key, data, opts)
	if err != nil || !strings.HasPrefix(key, repo.DataPrefix) {
		return info, err
	}
	pid, perr := id.Parse(path.Base(key))
	if perr != nil {
		return info, perr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packs = append(s.packs, pid)
	s.bytes += int64(len(data))
	if s.stopAfter > 0 && len(s.packs) == s.stopAfter {
		s.stopped = true
		if s.mode != packsFail { // a failing store stops the run itself
			s.cancel()
		}
	}
	return info, nil
}

// Get fails once a killed run is stopped.
func (s *packLog) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if s.mode == killed {
		if err := s.down(key); err != nil {
			return nil, err
		}
	}
	return s.Store.Get(ctx, key, max)
}

// runLogged backs up src into st through a packLog and returns the log
// and the run's error.
func runLogged(t *testing.T, st store.Store, src string, mode, stopAfter int) (*packLog, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &packLog{Store: st, mode: mode, stopAfter: stopAfter, cancel: cancel}
	r := checktest.Open(t, log)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	heads, _, err := r.SnapshotHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The lease is taken on st itself: a killed run's lock is not what
	// this test is about (a crashed process's lock expires).
	checktest.Locked(t, st, false, func(lease *lock.Lock) {
		w, werr := r.Writer(lease)
		if werr != nil {
			t.Fatal(werr)
		}
		_, err = backup.Run(ctx, w, heads, backup.Options{Path: src, Hostname: "test",
			Workers: 2, Uploaders: 2, CheckpointPacks: checkpointPacks})
	})
	return log, err
}

// checkpointPacks is the checkpoint pace of these tests' backups.
const checkpointPacks = 3

// TestInterruptedBackupResumes interrupts a backup of 24 one-MiB files
// (about 26 packs of 1 MiB) once 8 packs are stored, then runs it again.
// Interrupted cleanly (a cancelled context, failing pack uploads), the run
// indexes every pack it stored before it returns; killed (nothing reaches
// the store any more), it loses at most the packs stored since its last
// checkpoint. The re-run stores none of the blobs the index holds after
// the interruption, only what is missing, and the repository checks clean
// with -read-data. Before the re-run, check accepts the checkpoint's index
// files, and a prune dry run counts their packs as unused, now, while the
// unindexed ones wait for the margin.
func TestInterruptedBackupResumes(t *testing.T) {
	t.Parallel()
	const files, stopAfter = 24, 8
	src := t.TempDir()
	for i := range files {
		checktest.WriteFile(t, src, fmt.Sprintf("d%d/f%d", i%3, i), uint64(i+1), 1<<20)
	}
	tests := []struct {
		name string
		mode int
		// lost bounds the stored packs no index file names after the
		// interruption.
		lost int
	}{
		{"cancelled", cancelled, 0},
		{"store failure", packsFail, 0},
		{"killed", killed, checkpointPacks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := checktest.NewRepo(t, t.TempDir())
			first, err := runLogged(t, st, src, tc.mode, stopAfter)
			if err == nil {
				t.Fatal("the interrupted backup succeeded")
			}
			after := checktest.Open(t, st)
			if _, err := after.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			unindexed := 0
			for _, p := range first.packs {
				has, err := after.Index().HasPack(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if !has {
					unindexed++
				}
			}
			if len(first.packs) < stopAfter || unindexed > tc.lost {
				t.Fatalf("%d of the %d packs stored are in no index file, want at most %d (err %v)", unindexed, len(first.packs), tc.lost, err)
			}
			verifyInterrupted(t, st, unindexed)

			second, err := runLogged(t, st, src, cancelled, 0)
			if err != nil {
				t.Fatal(err)
			}
			final := checktest.Open(t, st)
			if _, err := final.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range second.packs {
				for _, e := range final.Index().PackEntries(p) {
					if after.Index().Has(t.Context(), e.ID) {
						t.Fatalf("the re-run stored blob %s again (pack %s)", e.ID.Short(), p.Short())
					}
				}
			}
			t.Logf("interrupted run stored %d packs (%d bytes), %d unindexed; the re-run %d packs (%d bytes)",
				len(first.packs), first.bytes, unindexed, len(second.packs), second.bytes)
			if second.bytes > int64(files-stopAfter+tc.lost+2)<<20 {
				t.Errorf("the re-run stored %d bytes of a %d MiB source, %d MiB of which were stored and indexed", second.bytes, files, len(first.packs)-unindexed)
			}
			res, err := check.Run(ctx, checktest.Open(t, st), check.Options{ReadData: true})
			if err != nil || !res.OK() {
				t.Fatalf("check -read-data after the re-run: %v %+v", err, res)
			}
		})
	}
}

// verifyInterrupted checks the repository an interrupted backup left:
// check finds no error (its checkpoint index files are index files like
// any other), and prune would delete every indexed pack (no snapshot uses
// them) while the unindexed ones are kept for the margin.
func verifyInterrupted(t *testing.T, st store.Store, unindexed int) {
	t.Helper()
	ctx := context.Background()
	res, err := check.Run(ctx, checktest.Open(t, st), check.Options{})
	if err != nil || !res.OK() {
		t.Fatalf("check after the interruption: %v %+v", err, res)
	}
	r := checktest.Open(t, st)
	var pr *prune.Result
	checktest.Locked(t, st, true, func(lease *lock.Lock) {
		w, werr := r.ExclusiveWriter(lease)
		if werr != nil {
			t.Fatal(werr)
		}
		pr, err = prune.Run(ctx, w, prune.Options{DryRun: true, Margin: prune.DefaultMargin})
	})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Kept.UnindexedPacks != unindexed || pr.PacksDeleted != res.Packs-unindexed {
		t.Errorf("prune would delete %d packs and keep %d unindexed, want %d and %d", pr.PacksDeleted, pr.Kept.UnindexedPacks, res.Packs-unindexed, unindexed)
	}
}
