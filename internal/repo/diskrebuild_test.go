package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// diskBlock is the on-disk index's block size (index.Disk's layout).
const diskBlock = 4096

// damageDisk damages the open on-disk index d in place, past what
// opening it checks: record block 2 (of 5), its pack table, or its end.
func damageDisk(t *testing.T, d *index.Disk, what string) {
	t.Helper()
	recordBlocks := int64((d.Len() + 83) / 84)
	f, err := os.OpenFile(d.Path(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // closed after the write below, checked there
	flip := func(at int64) {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, at); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 0x20
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
	}
	switch what {
	case "record block":
		flip(3*diskBlock + 700)
	case "pack table":
		flip((1+recordBlocks)*diskBlock + 100)
	case "truncated":
		err = f.Truncate(3 * diskBlock)
	default:
		t.Fatalf("unknown damage %q", what)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// savedBlobs stores n small blobs through a backup's saver and returns
// them by id.
func savedBlobs(t *testing.T, r *Repository, st store.Store, n int) map[id.ID][]byte {
	t.Helper()
	ctx := context.Background()
	s := writerFor(t, r, st).NewSaver(ctx, 2, pack.Zstd)
	blobs := make(map[id.ID][]byte, n)
	for i := range n {
		data := fmt.Appendf(nil, "blob %d of the on-disk index's damage tests", i)
		blobs[r.Key().ID(data)] = data
		if _, err := s.Save(ctx, pack.DataBlob, r.Key().ID(data), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return blobs
}

// TestDiskIndexDamageRebuilt: an on-disk index damaged past what opening
// it checks, while in use, is rebuilt by the first lookup that reads the
// damage (one rebuild, however many lookups run at once): every blob is
// still read, and the next run finds a good file. A rebuild whose
// directory cannot serve reads the index into memory; one that cannot
// read the index files fails with an error naming the local file. The
// old reader reported the blobs of the damaged block missing.
func TestDiskIndexDamageRebuilt(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	blobs := savedBlobs(t, r, st, 400) // 5 record blocks
	tests := []struct {
		damage string
		after  func(t *testing.T, r2 *Repository) // before the lookups
		want   string                             // "disk", "memory" or "error"
	}{
		{damage: "record block", want: "disk"},
		{damage: "pack table", want: "disk"},
		{damage: "truncated", want: "disk"},
		{damage: "record block", want: "memory", after: func(t *testing.T, r2 *Repository) {
			file := filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r2.diskIndex.Dir = filepath.Join(file, "index") // cannot exist
		}},
		{damage: "record block", want: "error", after: func(t *testing.T, r2 *Repository) {
			ids, _, err := r2.ListIDs(ctx, IndexPrefix)
			if err != nil {
				t.Fatal(err)
			}
			for _, fid := range ids {
				if err := st.Delete(ctx, IndexKey(fid)); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.damage+"/"+tt.want, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			r2 := openWithDiskIndex(t, st, dir)
			path := r2.Index().Base().Path()
			damageDisk(t, r2.Index().Base(), tt.damage)
			if tt.after != nil {
				tt.after(t, r2)
			}
			errs := loadAll(ctx, r2, blobs)
			if tt.want == "error" {
				checkRebuildFailed(t, errs, path)
				// Nor does a backup store the blobs again.
				s := writerFor(t, r2, st).NewSaver(ctx, 2, pack.Zstd)
				for b, data := range blobs {
					if added, err := s.Save(ctx, pack.DataBlob, b, data); !errors.Is(err, index.ErrDiskCorrupt) || added {
						t.Fatalf("Save: %v, %v; want the damaged file's error", added, err)
					}
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("%d blobs not read, first: %v", len(errs), errs[0])
			}
			if err := r2.Index().Err(); err != nil {
				t.Fatal(err)
			}
			if (r2.Index().Base() != nil) != (tt.want == "disk") {
				t.Fatalf("on-disk part %v, want %s", r2.Index().Base(), tt.want)
			}
			if tt.want == "disk" {
				checkNextRun(t, st, dir, path, blobs)
			}
		})
	}
}

// openWithDiskIndex opens the repository of st afresh and loads its index
// into an on-disk index in dir.
func openWithDiskIndex(t *testing.T, st store.Store, dir string) *Repository {
	t.Helper()
	ctx := context.Background()
	r2, err := Open(ctx, st, Credentials{PlatformKey: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	r2.SetDiskIndex(DiskIndex{Dir: dir, Min: -1})
	if _, err := r2.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	closeBase(t, r2)
	if r2.Index().Base() == nil {
		t.Fatal("no on-disk index")
	}
	return r2
}

// loadAll reads every blob, from 8 goroutines at once, and returns the
// failures.
func loadAll(ctx context.Context, r *Repository, blobs map[id.ID][]byte) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	ids := make(chan id.ID)
	for range 8 {
		wg.Go(func() {
			for b := range ids {
				got, err := r.LoadBlob(ctx, b)
				if err == nil && string(got) != string(blobs[b]) {
					err = fmt.Errorf("blob %s: wrong bytes", b.Short())
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for b := range blobs {
		ids <- b
	}
	close(ids)
	wg.Wait()
	return errs
}

// checkRebuildFailed checks that the reads that failed did because the
// local file could not be rebuilt, not because blobs are missing.
func checkRebuildFailed(t *testing.T, errs []error, path string) {
	t.Helper()
	if len(errs) == 0 {
		t.Fatal("every blob was read without the index files")
	}
	for _, err := range errs {
		if errors.Is(err, ErrBlobNotFound) || !errors.Is(err, index.ErrDiskCorrupt) || !strings.Contains(err.Error(), path) {
			t.Fatalf("LoadBlob: %v; want the damaged %s named, not a missing blob", err, path)
		}
	}
}

// checkNextRun checks that the damaged file was replaced by one good
// file, which the next run uses as it is.
func checkNextRun(t *testing.T, st store.Store, dir, path string, blobs map[id.ID][]byte) {
	t.Helper()
	files := diskFiles(t, dir)
	if len(files) != 1 || files[0] != path {
		t.Fatalf("on-disk files %v, want only the rebuilt %s", files, path)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r3 := openWithDiskIndex(t, st, dir)
	if errs := loadAll(context.Background(), r3, blobs); len(errs) > 0 {
		t.Fatalf("next run: %d blobs not read, first: %v", len(errs), errs[0])
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Index().Base().Path() != path || string(after) != string(before) || r3.Index().Err() != nil {
		t.Fatalf("next run: file %s rewritten or not used (%v)", r3.Index().Base().Path(), r3.Index().Err())
	}
}
