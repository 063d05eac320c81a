//go:build unix

package restore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
)

// testSegment is the segment size of these tests: big.bin (9 MiB) is
// split wherever its chunks allow.
const testSegment = 256 << 10

// largeFixture backs up big.bin (3 MiB of random data, 2 MiB of zeros,
// 3 MiB of random data, 1 MiB of zeros at its end) and small.txt.
func largeFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), src: t.TempDir(), files: []string{"big.bin", "small.txt"}}
	f.st = checktest.NewRepo(t, f.dir)
	var content []byte
	for _, run := range []struct {
		n      int
		random bool
	}{{3 << 20, true}, {2 << 20, false}, {3 << 20, true}, {1 << 20, false}} {
		b := make([]byte, run.n)
		if run.random {
			if _, err := rand.Read(b); err != nil {
				t.Fatal(err)
			}
		}
		content = append(content, b...)
	}
	if err := os.WriteFile(filepath.Join(f.src, "big.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	checktest.WriteFile(t, f.src, "small.txt", 2, 100)
	f.sid = checktest.Backup(t, f.st, f.src)
	if n := len(f.node(t, "big.bin").Content); n < 4 {
		t.Fatalf("big.bin has %d chunks: the test needs it in several segments", n)
	}
	return f
}

// restoreLarge restores the fixture with segments of testSegment bytes.
func (f *fixture) restoreLarge(t *testing.T, r *repo.Repository, ctx context.Context, opts restore.Options) (string, *restore.Result, error) {
	t.Helper()
	s, err := r.LoadSnapshot(ctx, f.sid)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Output == "" {
		opts.Output = filepath.Join(t.TempDir(), "out")
	}
	opts.Workers = 4
	restore.SetSegmentSize(&opts, testSegment)
	res, err := restore.Run(ctx, r, checktest.Lease(t, f.st), s.Tree, opts)
	return opts.Output, res, err
}

// TestRestoreLargeFileInSegments: a file restored by several workers at
// once, a segment each, is byte for byte the source, with its zero runs
// as holes by default and written with NoSparse, and reads back right
// (Verify).
func TestRestoreLargeFileInSegments(t *testing.T) {
	t.Parallel()
	f := largeFixture(t)
	for _, noSparse := range []bool{false, true} {
		r, _ := f.open(t)
		out, res, err := f.restoreLarge(t, r, context.Background(), restore.Options{NoSparse: noSparse, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		f.wantRestored(t, out, res)
		if res.Files != 2 || res.Verified != 2 || res.Bytes != 9<<20+100 {
			t.Errorf("NoSparse %v: %d files, %d verified, %d bytes", noSparse, res.Files, res.Verified, res.Bytes)
		}
		if used := allocated(t, filepath.Join(out, "big.bin")); noSparse && used < 9<<20 {
			t.Errorf("NoSparse: %d bytes allocated for 9 MiB", used)
		}
		wantNoTemp(t, out)
	}
	// Over a changed copy: written under a temporary name, renamed over it.
	r, _ := f.open(t)
	out, _, err := f.restoreLarge(t, r, context.Background(), restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(out, "big.bin"), 5<<20); err != nil {
		t.Fatal(err)
	}
	_, res, err := f.restoreLarge(t, r, context.Background(), restore.Options{Output: out, Overwrite: restore.OverwriteIfChanged})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced != 1 || res.Unchanged != 1 {
		t.Errorf("over a changed copy: %d replaced, %d unchanged; want 1 and 1", res.Replaced, res.Unchanged)
	}
	f.wantRestored(t, out, res)
	wantNoTemp(t, out)
}

// TestRestoreLargeFileWrongPlainLengths: an index whose plain lengths of a
// large file's chunks are wrong, though they add up to its size, would put
// segments at wrong offsets: the file is reported damaged, not written.
func TestRestoreLargeFileWrongPlainLengths(t *testing.T) {
	t.Parallel()
	f := largeFixture(t)
	ctx := context.Background()
	big := f.node(t, "big.bin").Content
	r := checktest.Open(t, f.st)
	files, _, err := r.ListIDs(ctx, repo.IndexPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var packs []index.PackBlobs
	plain := map[id.ID]uint32{}
	for _, fid := range files {
		file, err := r.IndexFile(ctx, fid)
		if err != nil {
			t.Fatal(err)
		}
		packs = append(packs, file.Packs...)
		for _, p := range file.Packs {
			for _, b := range p.Blobs {
				plain[b.ID] = b.Plain
			}
		}
	}
	// The first chunk 4 KiB longer, a later one 4 KiB shorter: the sum
	// stays right. The later one must be in another segment (within one,
	// chunks are written one after the other, whatever the index says)
	// and occur once in the file.
	seen := map[id.ID]int{}
	for _, c := range big {
		seen[c]++
	}
	var later id.ID
	var acc int64
	for _, c := range big {
		if acc >= testSegment && seen[c] == 1 && plain[c] > plain[later] {
			later = c // starts after the first segment's end
		}
		acc += int64(plain[c])
	}
	if seen[big[0]] != 1 || plain[later] <= 4096 {
		t.Fatalf("no chunks to shift in %d chunks", len(big))
	}
	shift := map[string]int64{big[0].String(): 4096, later.String(): -4096}
	shifted := 0
	for _, p := range packs {
		for i := range p.Blobs {
			if d, ok := shift[p.Blobs[i].ID.String()]; ok {
				p.Blobs[i].Plain = uint32(int64(p.Blobs[i].Plain) + d)
				shifted++
			}
		}
	}
	if shifted != 2 {
		t.Fatalf("shifted %d plain lengths, want 2", shifted)
	}
	if _, err := checktest.Writer(t, f.st, r).WriteIndex(ctx, packs); err != nil {
		t.Fatal(err)
	}
	for _, fid := range files {
		if err := f.st.Delete(ctx, repo.IndexKey(fid)); err != nil {
			t.Fatal(err)
		}
	}
	f.wantBigDamaged(t)
}

// wantBigDamaged restores the large fixture in segments and wants big.bin
// reported and left out, small.txt restored, and no temporary file.
func (f *fixture) wantBigDamaged(t *testing.T) {
	t.Helper()
	r, _ := f.open(t)
	out, res, err := f.restoreLarge(t, r, context.Background(), restore.Options{})
	if !errors.Is(err, restore.ErrDamaged) {
		t.Fatalf("restore: %v, want %v", err, restore.ErrDamaged)
	}
	f.wantRestored(t, out, res, "big.bin")
	wantNoTemp(t, out)
}

// TestRestoreLargeFileDamagedChunk: a damaged chunk in one segment leaves
// the whole file out (reported), and the rest of the restore intact.
func TestRestoreLargeFileDamagedChunk(t *testing.T) {
	t.Parallel()
	f := largeFixture(t)
	big := f.node(t, "big.bin").Content
	path, loc := f.locate(t, big[len(big)-2])
	flip(t, path, int64(loc.Offset)+int64(loc.Length)/2)
	f.wantBigDamaged(t)
}

// TestRestoreLargeFileInterrupted cancels a restore while a large file's
// segments are being written: nothing partly written under its name, no
// temporary file left.
func TestRestoreLargeFileInterrupted(t *testing.T) {
	t.Parallel()
	f := largeFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	r := checktest.Open(t, &cancelOnRead{Store: f.st, t: t, f: f, out: out, cancel: cancel})
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, f.sid)
	if err != nil {
		t.Fatal(err)
	}
	opts := restore.Options{Output: out, Workers: 4}
	restore.SetSegmentSize(&opts, testSegment)
	if _, err := restore.Run(ctx, r, checktest.Lease(t, f.st), s.Tree, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("restore: %v, want the cancellation", err)
	}
	for _, rel := range f.files {
		if _, err := os.Stat(filepath.Join(out, rel)); err == nil {
			wantSame(t, filepath.Join(f.src, rel), filepath.Join(out, rel))
		}
	}
	wantNoTemp(t, out)
}
