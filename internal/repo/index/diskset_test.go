package index

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// TestDiskFind checks that Find gives every blob of a file its record:
// the entry the reference (first copy added) names, at positions 0 to
// Len-1 in id order, with a pack position that PackAt maps back to its
// pack, across blocks and with a run size that forces merges; read from
// the file, or from memory after Preload.
func TestDiskFind(t *testing.T) {
	for i, k := range []Sealer{testKey(t), Unsealed{}, testKey(t), Unsealed{}} {
		rng := rand.New(rand.NewPCG(11, 12))
		packs := randomPacks(rng, 40, 60, 0.15, true)
		files, order := splitFiles(rng, packs, 5)
		d := buildDisk(t, t.TempDir(), k, 100, nil, files)
		if i >= 2 {
			if err := d.Preload(); err != nil {
				t.Fatal(err)
			}
		}
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

func TestDiskSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	packs := randomPacks(rng, 10, 100, 0.2, true)
	files, _ := splitFiles(rng, packs, 2)
	d := buildDisk(t, t.TempDir(), testKey(t), 1000, nil, files)
	s := d.NewSet()
	stranger := id.ID{0xab}
	for _, b := range []id.ID{packs[0].Blobs[0].ID, packs[3].Blobs[7].ID, stranger} {
		added, _, found, err := s.Add(b)
		if err != nil || !added || found != (b != stranger) {
			t.Fatalf("first Add(%s): added %v found %v, %v", b.Short(), added, found, err)
		}
		if added, _, _, _ := s.Add(b); added {
			t.Fatalf("second Add(%s) added it again", b.Short())
		}
		if has, err := s.Has(b); !has || err != nil {
			t.Fatalf("Has(%s): %v, %v", b.Short(), has, err)
		}
	}
	if has, _ := s.Has(packs[5].Blobs[1].ID); has {
		t.Fatal("Has of a blob never added")
	}
	rec, found, err := d.Find(packs[5].Blobs[1].ID)
	if err != nil || !found || !s.Mark(packs[5].Blobs[1].ID, rec, found) || s.Mark(packs[5].Blobs[1].ID, rec, found) {
		t.Fatalf("Mark of a found record: %v, %v", found, err)
	}
	if s.Len() != 4 {
		t.Fatalf("Len %d, want 4", s.Len())
	}
	var each []id.ID
	if err := s.Each(func(r Record) error {
		if got, _, _ := d.Find(r.Entry.ID); got != r {
			t.Errorf("Each gave %+v, Find %+v", r, got)
		}
		each = append(each, r.Entry.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []id.ID{packs[0].Blobs[0].ID, packs[3].Blobs[7].ID, packs[5].Blobs[1].ID}
	slices.SortFunc(want, compareIDs)
	if !slices.Equal(each, want) {
		t.Fatalf("Each visited %v, want %v", each, want)
	}
	// A block damaged in memory after Preload is found, as on disk.
	if err := d.Preload(); err != nil {
		t.Fatal(err)
	}
	d.mem[blockSize+100] ^= 1 // in the first record block, which Each reads first
	if err := s.Each(func(Record) error { return nil }); !errors.Is(err, ErrDiskCorrupt) {
		t.Fatalf("Each over a damaged block: %v", err)
	}
}

// TestFindAll checks that the parallel lookups answer as Find does, in
// the order asked, for a few blobs and for many.
func TestFindAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	packs := randomPacks(rng, 30, 100, 0.1, false)
	files, _ := splitFiles(rng, packs, 3)
	d := buildDisk(t, t.TempDir(), testKey(t), 1000, nil, files)
	var all []id.ID
	for _, p := range packs {
		for _, e := range p.Blobs {
			all = append(all, e.ID, randomID(rng, false)) // known, then a stranger
		}
	}
	for _, n := range []int{0, 1, 7, len(all)} {
		found, err := d.FindAll(all[:n])
		if err != nil || len(found) != n {
			t.Fatalf("FindAll(%d): %d, %v", n, len(found), err)
		}
		for i, f := range found {
			rec, ok, _ := d.Find(all[i])
			if f.OK != ok || f.Record != rec {
				t.Fatalf("FindAll(%d)[%d] = %+v, Find %+v %v", n, i, f, rec, ok)
			}
		}
	}
}
