package stats_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func randomBytes(seed byte, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b) // ChaCha8.Read never fails
	return b
}

func write(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCounter measures two real snapshots and checks every total against
// what the source holds and what the index records.
func TestCounter(t *testing.T) {
	ctx := context.Background()
	r := walktest.New(t)
	src := t.TempDir()
	big := randomBytes(1, 3<<20)
	write(t, filepath.Join(src, "big"), big)
	write(t, filepath.Join(src, "copy", "big"), big) // same contents: deduplicated
	write(t, filepath.Join(src, "small"), []byte("small file\n"))
	if err := os.Link(filepath.Join(src, "small"), filepath.Join(src, "small-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("small", filepath.Join(src, "sym")); err != nil {
		t.Fatal(err)
	}
	s1 := r.Backup(t, src, "h", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	write(t, filepath.Join(src, "new"), randomBytes(2, 100000))
	s2 := r.Backup(t, src, "h", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))

	var storedData, storedTrees, dataBlobs, treeBlobs int64
	if err := r.Index().Each(func(_ id.ID, loc index.Location) {
		if loc.Type == pack.DataBlob {
			storedData += int64(loc.Length)
			dataBlobs++
		} else {
			storedTrees += int64(loc.Length)
			treeBlobs++
		}
	}); err != nil {
		t.Fatal(err)
	}

	r.Rec.Reset()
	c := stats.NewCounter(r.Repository)
	if err := c.Add(ctx, s1); err != nil {
		t.Fatal(err)
	}
	first := c.Totals()
	if err := c.Add(ctx, s2); err != nil {
		t.Fatal(err)
	}
	got := c.Totals()
	bigSize, smallSize := int64(len(big)), int64(len("small file\n"))
	tests := []struct {
		name      string
		got, want int64
	}{
		{"first restore files (hard link once)", first.RestoreFiles, 3},
		{"first restore size", first.RestoreSize, 2*bigSize + smallSize},
		{"first unique files", first.UniqueFiles, 2},
		{"first unique data", first.UniqueData, bigSize + smallSize},
		{"snapshots", int64(got.Snapshots), 2},
		{"restore files", got.RestoreFiles, 7},
		{"restore size", got.RestoreSize, 4*bigSize + 2*smallSize + 100000},
		{"unique files", got.UniqueFiles, 3},
		{"unique files size", got.UniqueFilesSize, bigSize + smallSize + 100000},
		{"unique data", got.UniqueData, bigSize + smallSize + 100000},
		{"dirs", got.Dirs, 2},
		{"symlinks", got.Symlinks, 2},
		{"data blobs: all the index has", got.DataBlobs, dataBlobs},
		{"tree blobs: all the index has", got.TreeBlobs, treeBlobs},
		{"stored data", got.StoredData, storedData},
		{"stored trees", got.StoredTrees, storedTrees},
		{"stored size", got.StoredSize, storedData + storedTrees},
		{"missing blobs", got.MissingBlobs, 0},
		{"growth: the second snapshot adds its new file and trees", boolInt(got.StoredSize > first.StoredSize && got.StoredData-first.StoredData < 100000+4096), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
	if got.UniqueDataEstimated {
		t.Error("unique data marked estimated, though every file's blobs were all new or all known")
	}
	if got.FileBlobs < 4 || got.MaxFileBlobs < 2 {
		t.Errorf("file blobs %d, max %d: the 3 MiB file should have several", got.FileBlobs, got.MaxFileBlobs)
	}
	if r := got.DedupRatio(); r < 3.8 || r > 4 {
		t.Errorf("dedup ratio %.2f, want about 4 (the large file is in both snapshots twice)", r)
	}
	dataPacks := walktest.DataPacks(t, r.Repository)
	for p := range r.Rec.PackReads() {
		if dataPacks[p] {
			t.Errorf("stats read data pack %s", p.Short())
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestUniqueDataFromPlainSizes counts a file that shares some of its
// chunks with a file counted before it: the plain sizes of the index make
// the unique data exact, where stored sizes only gave an estimate.
func TestUniqueDataFromPlainSizes(t *testing.T) {
	ctx := context.Background()
	r := walktest.New(t)
	src := t.TempDir()
	a := randomBytes(3, 6<<20)
	b := append(append([]byte(nil), a[:4<<20]...), randomBytes(4, 3<<20)...) // a's start, then new data
	write(t, filepath.Join(src, "a"), a)
	write(t, filepath.Join(src, "b"), b)
	r.Backup(t, src, "h", time.Now())
	var plain int64 // of every distinct data blob, decoded
	if err := r.Index().Each(func(blob id.ID, loc index.Location) {
		if loc.Type != pack.DataBlob {
			return
		}
		data, err := r.LoadBlob(ctx, blob)
		if err != nil {
			t.Fatal(err)
		}
		plain += int64(len(data))
	}); err != nil {
		t.Fatal(err)
	}
	c := stats.NewCounter(r.Repository)
	snaps, _, err := r.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if err := c.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got := c.Totals()
	if got.UniqueData != plain || got.UniqueDataEstimated {
		t.Errorf("unique data %d (estimated: %v), want %d exactly", got.UniqueData, got.UniqueDataEstimated, plain)
	}
	if plain >= int64(len(a)+len(b)) || plain <= int64(len(a)) {
		t.Errorf("distinct data %d: the files should share some chunks, not all", plain)
	}
}
