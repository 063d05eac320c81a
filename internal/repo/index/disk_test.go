package index

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// testKey is the key the tests seal with, as an encrypted repository's.
func testKey(t testing.TB) *crypt.Key {
	t.Helper()
	k, err := crypt.FromMaster(bytes.Repeat([]byte{7}, crypt.MasterSize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// buildDisk writes an on-disk index of files (one id per file) merged
// with base, with runs of runCap entries, sealed with k, and opens it.
func buildDisk(t *testing.T, dir string, k Sealer, runCap int, base *Disk, files map[id.ID]*File) *Disk {
	t.Helper()
	b, err := newDiskBuilder(dir, k, runCap)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ids := make([]id.ID, 0, len(files))
	for fid := range files {
		ids = append(ids, fid)
	}
	slices.SortFunc(ids, compareIDs) // a fixed order: the first copy of a blob wins
	for _, fid := range ids {
		if err := b.AddFile(fid, files[fid]); err != nil {
			t.Fatal(err)
		}
	}
	path, err := b.Finish(base)
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenDisk(path, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() }) // read-only
	return d
}

// splitFiles deals packs into n index files with random ids.
func splitFiles(rng *rand.Rand, packs []PackBlobs, n int) (map[id.ID]*File, []PackBlobs) {
	files := make(map[id.ID]*File)
	ids := make([]id.ID, n)
	for i := range ids {
		ids[i] = randomID(rng, false)
		files[ids[i]] = &File{}
	}
	for i, p := range packs {
		f := files[ids[i%n]]
		f.Packs = append(f.Packs, p)
	}
	// The order in which buildDisk adds them, for the reference.
	slices.SortFunc(ids, compareIDs)
	var ordered []PackBlobs
	for _, fid := range ids {
		ordered = append(ordered, files[fid].Packs...)
	}
	return files, ordered
}

// checkAgainst checks every blob of ref, and misses, through x.
func checkAgainst(t *testing.T, x *Index, ref map[id.ID]Location, rng *rand.Rand) {
	t.Helper()
	for blob, want := range ref {
		got, ok := x.Lookup(t.Context(), blob)
		if !ok || got != want {
			t.Fatalf("Lookup(%s) = %+v, %v; want %+v", blob.Short(), got, ok, want)
		}
		if !x.Has(t.Context(), blob) {
			t.Fatalf("Has(%s) = false", blob.Short())
		}
	}
	for range 1000 {
		miss := randomID(rng, rng.IntN(2) == 0)
		if _, ok := ref[miss]; ok {
			continue
		}
		if x.Has(t.Context(), miss) {
			t.Fatalf("Has(%s) of an unknown blob", miss.Short())
		}
	}
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestDiskMatchesReference(t *testing.T) {
	tests := []struct {
		name          string
		packs, blobs  int
		files, runCap int
		dup           float64
		shared        bool
	}{
		{"empty", 0, 0, 1, 100, 0, false},
		{"one block", 1, 50, 1, 100, 0, false},
		{"many blocks, one run", 40, 100, 3, 1 << 16, 0.1, false},
		{"many runs", 40, 100, 7, 97, 0.2, false},
		{"cascaded runs", 50, 200, 5, 100, 0.1, false},           // > maxRuns runs
		{"two levels of merged runs", 50, 200, 5, 2, 0.1, false}, // > maxRuns² runs
		{"shared prefixes", 30, 90, 4, 250, 0.1, true},
	}
	keys := []struct {
		name string
		k    Sealer
	}{{"encrypted", testKey(t)}, {"unencrypted", crypt.Unencrypted(nil)}}
	for _, tt := range tests {
		for _, key := range keys {
			t.Run(tt.name+"/"+key.name, func(t *testing.T) {
				testDiskMatches(t, key.k, tt.packs, tt.blobs, tt.files, tt.runCap, tt.dup, tt.shared)
			})
		}
	}
}

func testDiskMatches(t *testing.T, k Sealer, packCount, blobs, fileCount, runCap int, dup float64, shared bool) {
	rng := rand.New(rand.NewPCG(1, uint64(packCount)))
	packs := randomPacks(rng, packCount, blobs, dup, shared)
	files, ordered := splitFiles(rng, packs, fileCount)
	dir := t.TempDir()
	d := buildDisk(t, dir, k, runCap, nil, files)
	ref := reference(ordered)
	if d.Len() != len(ref) || len(d.Files()) != fileCount {
		t.Fatalf("Len %d files %d; want %d and %d", d.Len(), len(d.Files()), len(ref), fileCount)
	}
	x := New()
	x.SetBase(d)
	checkAgainst(t, x, ref, rng)
	var seen []id.ID
	mustEach(t, x, func(blob id.ID, loc Location) {
		if loc != ref[blob] {
			t.Fatalf("Each: %s at %+v, want %+v", blob.Short(), loc, ref[blob])
		}
		seen = append(seen, blob)
	})
	if len(seen) != len(ref) || !slices.IsSortedFunc(seen, compareIDs) {
		t.Fatalf("Each gave %d blobs (sorted: %v), want %d", len(seen), slices.IsSortedFunc(seen, compareIDs), len(ref))
	}
	left, _ := filepath.Glob(filepath.Join(dir, "tmp-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// A base plus newer index files: merged into a new file, or held in
// memory beside the base, the answers are the same.
func TestDiskIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	oldPacks := randomPacks(rng, 30, 80, 0.1, false)
	newPacks := randomPacks(rng, 10, 80, 0.1, false)
	// Some of the new blobs repeat old ones: the old copy stays canonical.
	for i := range newPacks[0].Blobs[:20] {
		newPacks[0].Blobs[i].ID = oldPacks[i].Blobs[0].ID
	}
	oldFiles, oldOrdered := splitFiles(rng, oldPacks, 3)
	newFiles, newOrdered := splitFiles(rng, newPacks, 2)
	ref := reference(append(slices.Clone(oldOrdered), newOrdered...))
	dir := t.TempDir()
	k := testKey(t)
	base := buildDisk(t, dir, k, 500, nil, oldFiles)

	t.Run("merged", func(t *testing.T) {
		d := buildDisk(t, dir, k, 500, base, newFiles)
		if len(d.Files()) != 5 || d.Len() != len(ref) {
			t.Fatalf("merged file covers %d files and %d blobs; want 5 and %d", len(d.Files()), d.Len(), len(ref))
		}
		x := New()
		x.SetBase(d)
		checkAgainst(t, x, ref, rng)
		if got := len(mustPacks(t, x)); got != 40 {
			t.Fatalf("Packs: %d, want 40", got)
		}
	})
	t.Run("in memory beside the base", func(t *testing.T) {
		x := New()
		x.SetBase(base)
		for _, p := range newOrdered {
			x.Add(p.ID, p.Blobs)
		}
		checkAgainst(t, x, ref, rng)
		if !mustHasPack(t, x, oldPacks[3].ID) || !mustHasPack(t, x, newPacks[3].ID) || mustHasPack(t, x, randomID(rng, false)) {
			t.Fatal("HasPack is wrong")
		}
		n := 0
		mustEach(t, x, func(id.ID, Location) { n++ })
		if n != len(ref) {
			t.Fatalf("Each gave %d blobs, want %d", n, len(ref))
		}
	})
}

// A damaged file is refused when opened, or, when the damage is in a
// block read later, makes lookups answer "unknown" and Err say why.
func TestDiskDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	packs := randomPacks(rng, 20, 100, 0, false)
	files, ordered := splitFiles(rng, packs, 2)
	dir := t.TempDir()
	k := testKey(t)
	d := buildDisk(t, dir, k, 1000, nil, files)
	path := d.Path()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := d.l
	tests := []struct {
		name     string
		at       int64
		truncate bool
		atOpen   bool
	}{
		{"header", 10, false, true},
		{"first ids", l.firstsOff + 3, false, true},
		{"covered files", l.filesOff + 5, false, true},
		{"truncated", 0, true, true},
		{"record block", blockSize + 100, false, false},
		{"record block's checksum", blockSize + crcOffset + 1, false, false},
		{"pack block", l.packsOff + 7, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := slices.Clone(data)
			if tt.truncate {
				bad = bad[:len(bad)-1]
			} else {
				bad[tt.at] ^= 0x40
			}
			p := filepath.Join(t.TempDir(), "bad"+DiskSuffix)
			if err := os.WriteFile(p, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			bd, err := OpenDisk(p, k)
			if tt.atOpen {
				if !errors.Is(err, ErrDiskCorrupt) {
					t.Fatalf("OpenDisk: %v, want ErrDiskCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = bd.Close() }() // read-only
			x := New()
			x.SetBase(bd)
			for _, p := range ordered {
				for _, e := range p.Blobs {
					x.Lookup(t.Context(), e.ID)
				}
			}
			if !errors.Is(x.Err(), ErrDiskCorrupt) {
				t.Fatalf("Err: %v, want ErrDiskCorrupt", x.Err())
			}
			// After the failure every lookup says unknown: safe for a backup.
			if x.Has(t.Context(), ordered[0].Blobs[0].ID) {
				t.Fatal("a damaged base still answers")
			}
		})
	}
}

// A file opened with another key than it was sealed with is refused:
// at opening for another kind of key, at the first block for another key.
func TestDiskWrongKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	files, ordered := splitFiles(rng, randomPacks(rng, 4, 50, 0, false), 2)
	d := buildDisk(t, t.TempDir(), testKey(t), 1000, nil, files)
	if _, err := OpenDisk(d.Path(), crypt.Unencrypted(nil)); !errors.Is(err, ErrDiskCorrupt) {
		t.Fatalf("opened with an unencrypted key: %v", err)
	}
	other, err := crypt.FromMaster(bytes.Repeat([]byte{8}, crypt.MasterSize))
	if err != nil {
		t.Fatal(err)
	}
	od, err := OpenDisk(d.Path(), other)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = od.Close() }() // read-only
	x := New()
	x.SetBase(od)
	if x.Has(t.Context(), ordered[0].Blobs[0].ID) || !errors.Is(x.Err(), ErrDiskCorrupt) {
		t.Fatalf("another key's file answered; Err %v", x.Err())
	}
}

func TestDiskName(t *testing.T) {
	a, b := id.ID{1}, id.ID{2}
	if DiskName([]id.ID{a, b}) == DiskName([]id.ID{a}) || DiskName(nil) == DiskName([]id.ID{a}) {
		t.Fatal("different sets share a name")
	}
}

// FuzzOpenDisk feeds arbitrary bytes to the on-disk index's decoder:
// refused or opened, never a panic, and lookups of an opened one either
// work or fail with an error.
func FuzzOpenDisk(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	// A small seed (three blocks and the tail): the fuzzer minimises what it
	// finds interesting, which costs in proportion to the input.
	files, _ := splitFiles(rng, randomPacks(rng, 1, 3, 0, false), 1)
	dir := f.TempDir()
	k := testKey(f)
	b, err := newDiskBuilder(dir, k, 1000)
	if err != nil {
		f.Fatal(err)
	}
	for fid, file := range files {
		if err := b.AddFile(fid, file); err != nil {
			f.Fatal(err)
		}
	}
	path, err := b.Finish(nil)
	b.Close()
	if err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:blockSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f"+DiskSuffix)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDisk(p, k)
		if err != nil {
			return
		}
		defer func() { _ = d.Close() }() // read-only
		x := New()
		x.SetBase(d)
		var probe id.ID
		copy(probe[:], data[min(len(data), blockSize):])
		x.Lookup(t.Context(), probe)
		_ = x.Each(func(id.ID, Location) {}) // damaged input: it must only not panic
	})
}
