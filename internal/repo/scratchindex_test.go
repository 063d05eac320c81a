package repo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// TestScratchIndex checks that a scratch index is written in a directory
// of its own under the on-disk index directory, answers lookups, knows
// each pack listing and each pack's first one, reads the index files
// again for the packs' blobs (each pack once, a file gone reported), and
// goes with Close; and that one a dead process left is removed a day
// later.
func TestScratchIndex(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	dir := filepath.Join(t.TempDir(), "index")
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	r.SetDiskIndex(DiskIndex{Dir: dir, Clock: clock.NewFake(now)})

	packs := synthPacks(9, 3, 50)
	w := writerFor(t, r, st)
	// Two index files: the second lists packs[1] again.
	var fids []id.ID
	for _, set := range [][]index.PackBlobs{packs, packs[1:2]} {
		ids, err := w.WriteIndex(ctx, set)
		if err != nil || len(ids) != 1 {
			t.Fatalf("WriteIndex: %v, %v", ids, err)
		}
		fids = append(fids, ids[0])
	}
	s, err := r.NewScratchIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, fid := range fids {
		f, err := r.IndexFile(ctx, fid)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddFile(fid, f); err != nil {
			t.Fatal(err)
		}
	}
	if s.Listings() != 4 || s.Listing(3).ID != packs[1].ID || s.Listing(3).Blobs != 50 || s.Listing(3).Bytes != 5000 {
		t.Fatalf("%d listings, the last %+v", s.Listings(), s.Listing(3))
	}
	d, err := s.Finish(func(a, b uint32) bool { return a > b }) // the last listing first
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := d.Find(packs[1].Blobs[7].ID)
	if err != nil || !ok || rec.Pack != 3 || rec.Entry != packs[1].Blobs[7] {
		t.Fatalf("Find: %+v, %v, %v", rec, ok, err)
	}
	if first, ok := s.FirstListing(packs[1].ID); !ok || first != 1 || s.PackCount() != 3 {
		t.Fatalf("first listing of a pack listed twice: %d, %v; %d packs", first, ok, s.PackCount())
	}
	var each []id.ID
	if err := s.EachPack(ctx, func(p index.PackBlobs) error {
		each = append(each, p.ID)
		return nil
	}, func(fid id.ID, err error) error { return err }); err != nil {
		t.Fatal(err)
	}
	if want := []id.ID{packs[0].ID, packs[1].ID, packs[2].ID}; !slices.Equal(each, want) {
		t.Fatalf("EachPack visited %v, want %v", each, want)
	}
	if err := st.Delete(ctx, IndexKey(fids[0])); err != nil {
		t.Fatal(err)
	}
	var gone []id.ID
	err = s.EachPack(ctx, func(p index.PackBlobs) error { return nil }, func(fid id.ID, err error) error {
		if errors.Is(err, ErrNotFound) {
			gone = append(gone, fid)
			return nil
		}
		return err
	})
	if err != nil || !slices.Equal(gone, fids[:1]) {
		t.Fatalf("EachPack with a file gone: %v, reported %v", err, gone)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Fatalf("want the scratch directory in %s, have %v", dir, left)
	}
	s.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Close left %v", left)
	}

	// A scratch directory of a check that died, and one of a check
	// running now.
	for name, age := range map[string]time.Duration{"tmp-scratch-dead": 25 * time.Hour, "tmp-scratch-live": time.Hour} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "tmp-run-1"), []byte("entries"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.pickDiskIndex(map[id.ID]bool{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp-scratch-dead")); !os.IsNotExist(err) {
		t.Errorf("a dead check's scratch directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp-scratch-live", "tmp-run-1")); err != nil {
		t.Errorf("a running check's scratch directory was touched: %v", err)
	}
}

// TestScratchIndexSystemTemp checks that without an on-disk index
// directory a scratch index goes under the system's temporary directory,
// in a directory named as ours, and that making one there removes what a
// killed command left a day ago, and nothing else.
func TestScratchIndexSystemTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir on Unix
	t.Setenv("TMP", tmp)    // and on Windows
	t.Setenv("TEMP", tmp)
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	r, _ := newTestRepo(t)
	r.SetDiskIndex(DiskIndex{Clock: clock.NewFake(now)})

	tests := []struct {
		name string
		age  time.Duration
		kept bool
	}{
		{"cloudstic-scratch-dead", 25 * time.Hour, false},
		{"cloudstic-scratch-live", time.Hour, true},
		{"other-program-old", 48 * time.Hour, true},
	}
	for _, tc := range tests {
		p := filepath.Join(tmp, tc.name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-tc.age), now.Add(-tc.age)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := r.NewScratchIndex()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(s.dir) != tmp || !strings.HasPrefix(filepath.Base(s.dir), systemScratchPrefix) {
		t.Errorf("scratch directory %s, want %s* under %s", s.dir, systemScratchPrefix, tmp)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(tmp, tc.name))
			if kept := err == nil; kept != tc.kept {
				t.Errorf("kept %v, want %v (%v)", kept, tc.kept, err)
			}
		})
	}
	s.Close()
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", s.dir, err)
	}
}
