package backup_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestCancelStopsReadingKnownChunks cancels a backup while it reads a
// 1 TiB sparse file. Its zeros are one chunk seen over and over, so no
// chunk is handed to a blob worker that would notice the cancellation: the
// reading loop itself must, or the run would go on for the whole file
// (and Ctrl-C would wait for it, holding the lock).
func TestCancelStopsReadingKnownChunks(t *testing.T) {
	t.Parallel()
	const size = 1 << 40
	src := t.TempDir()
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &backup.Progress{}
	// Cancel once some of the file has been read: polled, as the run
	// offers no hook inside its reading loop.
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for progress.Bytes.Load() < 64<<20 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		cancel()
	}()
	_, err = backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Path: src, Progress: progress})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("backup.Run = %v, want context.Canceled", err)
	}
	if read := progress.Bytes.Load(); read >= size {
		t.Errorf("read all %d bytes of the file before stopping", read)
	}
}

// cancelAtFirstPackRead cancels the run at its first read of a pack and
// fails that read with the cancellation, as a lost lease or Ctrl-C does to
// a request in flight.
type cancelAtFirstPackRead struct {
	store.Store
	cancel context.CancelFunc
}

func (s cancelAtFirstPackRead) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if strings.HasPrefix(key, "data/") {
		s.cancel()
		return nil, fmt.Errorf("%s: %w (connection lost)", key, context.Canceled)
	}
	return s.Store.Get(ctx, key, max)
}

func (s cancelAtFirstPackRead) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if strings.HasPrefix(key, "data/") {
		s.cancel()
		return nil, fmt.Errorf("%s: %w (connection lost)", key, context.Canceled)
	}
	return s.Store.GetRange(ctx, key, offset, length)
}

// TestCancelWhileReadingParent: a backup interrupted while it reads its
// parent's tree fails with the interruption and warns of nothing. It used
// to warn that the parent was unreadable and that every file would be read
// again, burying the real cause (the network-fault test caught it).
func TestCancelWhileReadingParent(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	write(t, filepath.Join(src, "f"), "content")
	st := checktest.NewRepo(t, t.TempDir())
	first := backupOf(t, st, src, nil, time.Now().Add(time.Hour))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := checktest.Open(t, cancelAtFirstPackRead{Store: st, cancel: cancel})
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	snaps := []snapshot.WithID{{ID: first.ID, Snapshot: first.Snapshot}}
	_, err := backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(snaps), backup.Options{Path: src, Hostname: "test", Workers: 2,
		Warnf: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("backup.Run = %v, want context.Canceled", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings %q, want none: the interruption is the whole story", warnings)
	}
}
