package repo

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// synthPacks returns n packs of per blobs each, their ids derived from
// tag so that different calls do not collide.
func synthPacks(tag byte, n, per int) []index.PackBlobs {
	var packs []index.PackBlobs
	for p := range n {
		pb := index.PackBlobs{ID: id.ID{tag, byte(p), byte(p >> 8), 1}}
		for b := range per {
			// Random-looking ids, as real ones are: the index files'
			// sizes, which decide when a new file is written, are then real.
			blob := id.ID(sha256.Sum256([]byte{tag, byte(p), byte(p >> 8), byte(b), byte(b >> 8)}))
			pb.Blobs = append(pb.Blobs, pack.Entry{Type: pack.DataBlob, ID: blob,
				Offset: uint32(b * 100), Length: 100, Plain: 90})
		}
		packs = append(packs, pb)
	}
	return packs
}

// diskFiles lists the on-disk index files in dir.
func diskFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+index.DiskSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// closeBase closes r's on-disk index when the test ends: Windows removes
// no file a handle is open on, neither the test's temporary directory
// nor a later run's stale file.
func closeBase(t *testing.T, r *Repository) {
	t.Cleanup(func() {
		if d := r.Index().Base(); d != nil {
			_ = d.Close() // read-only
		}
	})
}

// TestDiskIndexLifecycle follows the on-disk index through the life of a
// repository: built once, reused while backups add index files (those
// read into memory beside it), rebuilt when they grow, never used once an
// index file it covers is gone, rebuilt when damaged, and bypassed for a
// directory that cannot serve.
func TestDiskIndexLifecycle(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	dir := filepath.Join(t.TempDir(), "index")
	w := writerFor(t, r, st)
	write := func(packs []index.PackBlobs) []id.ID {
		t.Helper()
		ids, err := w.WriteIndex(ctx, packs)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	all := map[id.ID]index.Location{}
	note := func(packs []index.PackBlobs) {
		for _, p := range packs {
			for _, e := range p.Blobs {
				all[e.ID] = index.Location{Pack: p.ID, Entry: e}
			}
		}
	}
	// load opens the repository afresh, loads its index with the on-disk
	// index in d, and checks every blob written so far.
	load := func(t *testing.T, d DiskIndex) *Repository {
		t.Helper()
		r2, err := Open(ctx, st, Credentials{PlatformKey: strings.Repeat("ab", 32)})
		if err != nil {
			t.Fatal(err)
		}
		r2.SetDiskIndex(d)
		if _, err := r2.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		closeBase(t, r2)
		for blob, want := range all {
			if got, ok := r2.Index().Lookup(t.Context(), blob); !ok || got != want {
				t.Fatalf("Lookup(%s) = %+v, %v; want %+v", blob.Short(), got, ok, want)
			}
		}
		if r2.Index().Has(t.Context(), id.ID{0xee}) {
			t.Fatal("an unknown blob is known")
		}
		if err := r2.Index().Err(); err != nil {
			t.Fatal(err)
		}
		return r2
	}
	always := DiskIndex{Dir: dir, Min: -1, Delta: 40_000}

	first := synthPacks(1, 20, 500) // ~450 KB of index files
	firstFiles := write(first)
	note(first)
	var built string
	t.Run("built once", func(t *testing.T) {
		r2 := load(t, always)
		got := diskFiles(t, dir)
		if len(got) != 1 || r2.Index().Base() == nil || r2.Index().Base().Len() != 20*500 {
			t.Fatalf("on-disk files %v, base %v", got, r2.Index().Base())
		}
		built = got[0]
	})
	t.Run("reused, new files in memory", func(t *testing.T) {
		small := synthPacks(2, 1, 100)
		write(small)
		note(small)
		r2 := load(t, always)
		if got := diskFiles(t, dir); len(got) != 1 || got[0] != built || r2.Index().Base().Path() != built {
			t.Fatalf("on-disk files %v, want only %s", got, built)
		}
	})
	t.Run("merged into a new file when the rest grows", func(t *testing.T) {
		more := synthPacks(3, 10, 500)
		write(more)
		note(more)
		r2 := load(t, always)
		got := diskFiles(t, dir)
		if len(got) != 1 || got[0] == built || r2.Index().Base().Len() != len(all) {
			t.Fatalf("on-disk files %v (was %s), base has %d of %d", got, built, r2.Index().Base().Len(), len(all))
		}
		built = got[0]
	})
	t.Run("a leftover no larger than the file in use is removed", func(t *testing.T) {
		// As a superseded file that could not be removed when it was
		// (Windows, another process holding it open) is found later.
		data, err := os.ReadFile(built)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "leftover"+index.DiskSuffix), data, 0o600); err != nil {
			t.Fatal(err)
		}
		load(t, always)
		if got := diskFiles(t, dir); len(got) != 1 {
			t.Fatalf("on-disk files %v, want one", got)
		}
		built = diskFiles(t, dir)[0]
	})
	t.Run("not used once a covered index file is gone", func(t *testing.T) {
		if err := st.Delete(ctx, IndexKey(firstFiles[0])); err != nil {
			t.Fatal(err)
		}
		for _, p := range first {
			for _, e := range p.Blobs {
				delete(all, e.ID)
			}
		}
		kept := first[:0:0]
		for _, fid := range firstFiles[1:] {
			f, err := r.IndexFile(ctx, fid)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, f.Packs...)
		}
		note(kept)
		gone := first[0].Blobs[0].ID
		if _, ok := all[gone]; ok && len(firstFiles) > 1 {
			t.Skip("the first pack is in a kept file")
		}
		r2 := load(t, always)
		if got := diskFiles(t, dir); len(got) != 1 || got[0] == built {
			t.Fatalf("on-disk files %v: the stale %s must go", got, built)
		}
		if r2.Index().Has(t.Context(), gone) {
			t.Fatal("a blob of a deleted index file is still known")
		}
		built = diskFiles(t, dir)[0]
	})
	t.Run("rebuilt when damaged", func(t *testing.T) {
		data, err := os.ReadFile(built)
		if err != nil {
			t.Fatal(err)
		}
		data[20] ^= 1
		if err := os.WriteFile(built, data, 0o600); err != nil {
			t.Fatal(err)
		}
		load(t, always)
		if got := diskFiles(t, dir); len(got) != 1 {
			t.Fatalf("on-disk files %v", got)
		}
	})
	t.Run("below the minimum: in memory", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "index")
		r2 := load(t, DiskIndex{Dir: other, Min: 1 << 40})
		if r2.Index().Base() != nil || len(diskFiles(t, other)) != 0 {
			t.Fatal("an on-disk index below the minimum")
		}
	})
	t.Run("a directory that cannot serve: in memory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r2 := load(t, DiskIndex{Dir: filepath.Join(file, "index"), Min: -1})
		if r2.Index().Base() != nil {
			t.Fatal("an on-disk index in a directory that cannot exist")
		}
	})
}

// TestDiskIndexSaver: a backup's new blobs sit in memory beside the
// on-disk part; blobs the part holds are not stored again.
func TestDiskIndexSaver(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	w := writerFor(t, r, st)
	s := w.NewSaver(ctx, 2, pack.Zstd)
	old := []byte("stored before the on-disk index was built")
	oldID := r.Key().ID(old)
	if _, err := s.Save(ctx, pack.DataBlob, oldID, old); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, st, Credentials{PlatformKey: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	r2.SetDiskIndex(DiskIndex{Dir: t.TempDir(), Min: -1})
	if _, err := r2.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	closeBase(t, r2)
	if r2.Index().Base() == nil {
		t.Fatal("no on-disk index")
	}
	s2 := writerFor(t, r2, st).NewSaver(ctx, 2, pack.Zstd)
	if _, err := s2.Save(ctx, pack.DataBlob, oldID, old); err != nil {
		t.Fatal(err)
	}
	fresh := []byte("new in this backup")
	freshID := r2.Key().ID(fresh)
	if _, err := s2.Save(ctx, pack.DataBlob, freshID, fresh); err != nil {
		t.Fatal(err)
	}
	if err := s2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s2.Stats(); st.BlobsAdded != 1 {
		t.Fatalf("stats %+v: the known blob was stored again", st)
	}
	for blob, want := range map[id.ID][]byte{oldID: old, freshID: fresh} {
		got, err := r2.LoadBlob(ctx, blob)
		if err != nil || string(got) != string(want) {
			t.Fatalf("LoadBlob(%s) = %q, %v", blob.Short(), got, err)
		}
	}
}
