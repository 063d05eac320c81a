package index

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// TestDiskFind checks that Find gives every blob of a file its record:
// the entry the reference (first copy added) names, at positions 0 to
// Len-1 in id order, with a pack position that PackAt maps back to its
// pack, across blocks and with a run size that forces merges.
func TestDiskFind(t *testing.T) {
	for _, k := range []Sealer{testKey(t), Unsealed{}} {
		rng := rand.New(rand.NewPCG(11, 12))
		packs := randomPacks(rng, 40, 60, 0.15, true)
		files, order := splitFiles(rng, packs, 5)
		d := buildDisk(t, t.TempDir(), k, 100, nil, files)
		ref := reference(order)
		ids := make([]id.ID, 0, len(ref))
		for b := range ref {
			ids = append(ids, b)
		}
		slices.SortFunc(ids, compareIDs)
		if d.Len() != len(ids) {
			t.Fatalf("Len %d, want %d", d.Len(), len(ids))
		}
		for pos, b := range ids {
			rec, ok, err := d.Find(b)
			if err != nil || !ok {
				t.Fatalf("Find(%s): %v, %v", b.Short(), ok, err)
			}
			p, err := d.PackAt(rec.Pack)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Pos != pos || p != ref[b].Pack || rec.Entry != ref[b].Entry {
				t.Fatalf("Find(%s) = pos %d in %s %+v, want pos %d in %s %+v", b.Short(), rec.Pos, p.Short(), rec.Entry, pos, ref[b].Pack.Short(), ref[b].Entry)
			}
		}
		if _, ok, err := d.Find(id.ID{0xff, 0xff, 0xff}); ok || err != nil {
			t.Fatalf("Find of a stranger: %v, %v", ok, err)
		}
	}
}

// TestDiskPrefer checks that a builder's preference picks which copy of a
// blob is its record: the first in a preferred pack, else the first.
func TestDiskPrefer(t *testing.T) {
	blob, other := id.ID{0x42}, id.ID{0x43}
	packs := []PackBlobs{
		{ID: id.ID{1}, Blobs: []pack.Entry{{ID: blob, Offset: 0, Length: 10}, {ID: other, Offset: 10, Length: 10}}},
		{ID: id.ID{2}, Blobs: []pack.Entry{{ID: blob, Offset: 5, Length: 10}}},
		{ID: id.ID{3}, Blobs: []pack.Entry{{ID: blob, Offset: 7, Length: 10}, {ID: other, Offset: 20, Length: 10}}},
	}
	cases := []struct {
		name      string
		prefer    func(a, b uint32) bool
		blobPack  uint32
		otherPack uint32
	}{
		{name: "none", prefer: nil, blobPack: 0, otherPack: 0},
		{name: "second and third", prefer: func(a, b uint32) bool { return a != 0 && b == 0 }, blobPack: 1, otherPack: 2},
		{name: "third", prefer: func(a, b uint32) bool { return a == 2 && b != 2 }, blobPack: 2, otherPack: 2},
		{name: "newest", prefer: func(a, b uint32) bool { return a > b }, blobPack: 2, otherPack: 2},
		{name: "all equal", prefer: func(uint32, uint32) bool { return false }, blobPack: 0, otherPack: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := newDiskBuilder(t.TempDir(), testKey(t), 2) // runs of 2: copies in several runs
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for _, p := range packs {
				if err := b.AddPack(p); err != nil {
					t.Fatal(err)
				}
			}
			b.Prefer(c.prefer)
			path, err := b.Finish(nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := OpenDisk(path, testKey(t))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close() //nolint:errcheck // read-only
			for _, want := range []struct {
				blob id.ID
				pack uint32
			}{{blob, c.blobPack}, {other, c.otherPack}} {
				rec, ok, err := d.Find(want.blob)
				if err != nil || !ok || rec.Pack != want.pack {
					t.Fatalf("%s in pack %d (%v, %v), want %d", want.blob.Short(), rec.Pack, ok, err, want.pack)
				}
			}
			if d.Len() != 2 {
				t.Fatalf("Len %d, want 2", d.Len())
			}
		})
	}
}
