package snapcopy_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/store"
)

// cancelAfterPacks logs the packs stored through it and cancels the run
// once stopAfter are stored (0: never), as Ctrl-C does.
type cancelAfterPacks struct {
	store.Store
	stopAfter int
	cancel    context.CancelFunc
	mu        sync.Mutex
	packs     []id.ID
}

func (s *cancelAfterPacks) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	info, err := s.Store.Put(ctx, key, data, opts)
	if err != nil || !strings.HasPrefix(key, repo.DataPrefix) {
		return info, err
	}
	pid, err := id.Parse(path.Base(key))
	if err != nil {
		return info, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packs = append(s.packs, pid)
	if len(s.packs) == s.stopAfter {
		s.cancel()
	}
	return info, nil
}

// TestCopyResumesWithinSnapshot interrupts the copy of one snapshot of
// 8 MiB (about 9 packs of 1 MiB in the destination) once 3 packs are
// stored: every pack it stored is indexed, the re-run stores none of the
// blobs the destination's index holds after the interruption, and the copy
// checks clean and restores.
func TestCopyResumesWithinSnapshot(t *testing.T) {
	t.Parallel()
	src := checktest.NewRepo(t, t.TempDir())
	dir := t.TempDir()
	for i := range 8 {
		checktest.WriteFile(t, dir, fmt.Sprintf("f%d", i), uint64(i+10), 1<<20)
	}
	sid := checktest.Backup(t, src, dir)
	dst := newDest(t, repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &cancelAfterPacks{Store: dst, stopAfter: 3, cancel: cancel}
	if _, err := runCopy(ctx, t, src, first, snapcopy.Options{}); err == nil {
		t.Fatal("the interrupted copy succeeded")
	}
	after := openDest(t, dst)
	if _, err := after.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range first.packs {
		if has, err := after.Index().HasPack(t.Context(), p); err != nil || !has {
			t.Fatalf("pack %s, stored before the interruption, is in no index file (%v)", p.Short(), err)
		}
	}
	second := &cancelAfterPacks{Store: dst}
	if _, err := runCopy(context.Background(), t, src, second, snapcopy.Options{}); err != nil {
		t.Fatal(err)
	}
	final := openDest(t, dst)
	if _, err := final.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range second.packs {
		for _, e := range final.Index().PackEntries(p) {
			if after.Index().Has(t.Context(), e.ID) {
				t.Fatalf("the re-run stored blob %s again", e.ID.Short())
			}
		}
	}
	t.Logf("interrupted copy stored %d packs, the re-run %d", len(first.packs), len(second.packs))
	checkClean(t, dst)
	restoreEqual(t, dst, destSnapshots(t, dst)[sid], dir)
}
