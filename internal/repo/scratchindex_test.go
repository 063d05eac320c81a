package repo

import (
	"bytes"
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
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
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
	n, ok := s.PackNumber(packs[1].ID)
	if l, first := s.Pack(n); !ok || first != 1 || l.ID != packs[1].ID || s.PackCount() != 3 {
		t.Fatalf("first listing of a pack listed twice: %d, %v; %d packs", first, ok, s.PackCount())
	}
	if s.PackOf(3) != n || s.IsFirst(3) || !s.IsFirst(1) {
		t.Fatalf("the second listing of pack %d: numbered %d, first %v", n, s.PackOf(3), s.IsFirst(3))
	}
	idOf := func(n int) id.ID { l, _ := s.Pack(n); return l.ID }
	for i := 1; i < s.PackCount(); i++ {
		if a, b := idOf(i-1), idOf(i); bytes.Compare(a[:], b[:]) >= 0 {
			t.Fatalf("packs %d and %d out of order: %s, %s", i-1, i, a, b)
		}
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

// TestListPacks checks the store's listing of the packs against a scratch
// index's numbers: a pack listed and stored, one stored under a key of
// its own, one listed but not stored, packs stored that no index file
// lists (by id; one of them under a key of its own), and a key that names
// no pack.
func TestListPacks(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	packs := synthPacks(7, 3, 2)
	w := writerFor(t, r, st)
	fids, err := w.WriteIndex(ctx, packs)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	put := func(key string, size int) {
		t.Helper()
		if _, err := st.Put(ctx, key, make([]byte, size), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(st.(*local.Store).Root(), filepath.FromSlash(key)), when, when); err != nil {
			t.Fatal(err)
		}
	}
	unindexed := []id.ID{{9, 2}, {1, 5}, {3, 3}}
	put(PackKey(packs[0].ID), 10)
	misplaced := DataPrefix + "zz/" + packs[2].ID.String()
	put(misplaced, 30)
	for _, u := range unindexed[:2] {
		put(PackKey(u), 40)
	}
	misplacedUnindexed := DataPrefix + "yy/" + unindexed[2].String()
	put(misplacedUnindexed, 40)
	put(DataPrefix+"ab/not-a-pack", 1)

	s, err := r.NewScratchIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := r.IndexFile(ctx, fids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddFile(fids[0], f); err != nil {
		t.Fatal(err)
	}
	sp, bad, err := s.ListPacks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bad, []string{DataPrefix + "ab/not-a-pack"}) || sp.Stored() != 5 {
		t.Fatalf("bad keys %v, %d packs stored", bad, sp.Stored())
	}
	tests := []struct {
		name string
		pack id.ID
		want ObjectEntry
		ok   bool
	}{
		{"stored", packs[0].ID, ObjectEntry{ID: packs[0].ID, Key: PackKey(packs[0].ID), Size: 10, ModTime: when}, true},
		{"not stored", packs[1].ID, ObjectEntry{}, false},
		{"misplaced", packs[2].ID, ObjectEntry{ID: packs[2].ID, Key: misplaced, Size: 30, ModTime: when}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, ok := s.PackNumber(tc.pack)
			if !ok {
				t.Fatal("not numbered")
			}
			got, ok := sp.Entry(n)
			if ok != tc.ok || ok != sp.OnStore(n) || got.ID != tc.want.ID || got.Key != tc.want.Key || got.Size != tc.want.Size || !got.ModTime.Equal(tc.want.ModTime) {
				t.Errorf("Entry = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
			if sp.ID(n) != tc.pack {
				t.Errorf("ID(%d) = %s", n, sp.ID(n))
			}
		})
	}
	var got []ObjectEntry
	for i := range sp.UnindexedCount() {
		got = append(got, sp.Unindexed(i))
	}
	want := []ObjectEntry{
		{ID: unindexed[1], Key: PackKey(unindexed[1]), Size: 40, ModTime: when},
		{ID: unindexed[2], Key: misplacedUnindexed, Size: 40, ModTime: when},
		{ID: unindexed[0], Key: PackKey(unindexed[0]), Size: 40, ModTime: when},
	}
	if !slices.EqualFunc(got, want, func(a, b ObjectEntry) bool {
		return a.ID == b.ID && a.Key == b.Key && a.Size == b.Size && a.ModTime.Equal(b.ModTime)
	}) {
		t.Errorf("unindexed %+v, want %+v (by id)", got, want)
	}
}

// TestPackListings checks that a scratch index of pack listings only
// writes nothing to disk (neither under the on-disk index directory nor
// under the system's temporary directory), numbers the packs, yields
// each pack's first listing with its blobs, lists the store's packs
// against them, and refuses Finish.
func TestPackListings(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir on Unix
	t.Setenv("TMP", tmp)    // and on Windows
	t.Setenv("TEMP", tmp)
	r, st := newTestRepo(t)
	dir := filepath.Join(t.TempDir(), "index")
	r.SetDiskIndex(DiskIndex{Dir: dir})

	packs := synthPacks(5, 3, 4)
	w := writerFor(t, r, st)
	s := r.NewPackListings()
	defer s.Close()
	for _, set := range [][]index.PackBlobs{packs, packs[1:2]} { // packs[1] listed twice
		fids, err := w.WriteIndex(ctx, set)
		if err != nil || len(fids) != 1 {
			t.Fatalf("WriteIndex: %v, %v", fids, err)
		}
		f, err := r.IndexFile(ctx, fids[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddFile(fids[0], f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Put(ctx, PackKey(packs[2].ID), make([]byte, 10), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sp, _, err := s.ListPacks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := s.PackNumber(packs[2].ID); s.Listings() != 4 || s.PackCount() != 3 || !ok || !sp.OnStore(n) || sp.Stored() != 1 {
		t.Fatalf("%d listings, %d packs, %d stored; packs[2] numbered %v", s.Listings(), s.PackCount(), sp.Stored(), ok)
	}
	var each []index.PackBlobs
	if err := s.EachPack(ctx, func(p index.PackBlobs) error {
		each = append(each, p)
		return nil
	}, func(_ id.ID, err error) error { return err }); err != nil {
		t.Fatal(err)
	}
	if len(each) != len(packs) {
		t.Fatalf("EachPack gave %d packs, want %d", len(each), len(packs))
	}
	for i, p := range each {
		if p.ID != packs[i].ID || !slices.Equal(p.Blobs, packs[i].Blobs) {
			t.Errorf("EachPack's pack %d: %s with %d blobs, want %s", i, p.ID.Short(), len(p.Blobs), packs[i].ID.Short())
		}
	}
	if d, err := s.Finish(func(a, b uint32) bool { return a < b }); !errors.Is(err, ErrListingsOnly) || d != nil {
		t.Errorf("Finish: %v, %v; want ErrListingsOnly", d, err)
	}
	for _, parent := range []string{dir, tmp} {
		if left, _ := os.ReadDir(parent); len(left) != 0 {
			t.Errorf("pack listings wrote %v under %s", left, parent)
		}
	}
}
