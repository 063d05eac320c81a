package index

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// randomID returns a random id; with shared set, its first 4 bytes are
// fixed so that many ids share a key prefix (the slow path of lookups).
func randomID(rng *rand.Rand, shared bool) id.ID {
	var b id.ID
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	if shared {
		copy(b[:4], "\x12\x34\x56\x78")
	}
	return b
}

// randomPacks returns packs of random blobs; dup is the fraction of blobs
// that repeat a blob of an earlier pack.
func randomPacks(rng *rand.Rand, packs, perPack int, dup float64, shared bool) []PackBlobs {
	var all []id.ID
	out := make([]PackBlobs, packs)
	for p := range out {
		out[p].ID = randomID(rng, false)
		for i := 0; i < perPack; i++ {
			b := randomID(rng, shared && i%3 == 0)
			if len(all) > 0 && rng.Float64() < dup {
				b = all[rng.IntN(len(all))]
			}
			all = append(all, b)
			out[p].Blobs = append(out[p].Blobs, pack.Entry{Type: pack.BlobType(i % 2), ID: b, Offset: uint32(i * 1000),
				Length: uint32(1 + rng.IntN(pack.MaxBlobSize)), Plain: uint32(rng.IntN(1 << 20))})
		}
	}
	return out
}

// reference is what the index must answer: the first location of every
// blob, in the order packs were added.
func reference(packs []PackBlobs) map[id.ID]Location {
	ref := make(map[id.ID]Location)
	for _, p := range packs {
		for _, e := range p.Blobs {
			if _, ok := ref[e.ID]; !ok {
				ref[e.ID] = Location{Pack: p.ID, Entry: e}
			}
		}
	}
	return ref
}

func TestIndexMatchesMap(t *testing.T) {
	cases := []struct {
		name           string
		packs, perPack int
		dup            float64
		shared         bool
	}{
		{"empty", 0, 0, 0, false},
		{"one pack", 1, 10, 0, false},
		{"delta only", 20, 50, 0.1, false},
		{"several merges", 40, 2000, 0.05, false},
		{"shared prefixes and duplicates", 50, 300, 0.3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(c.packs)))
			packs := randomPacks(rng, c.packs, c.perPack, c.dup, c.shared)
			x := New()
			for i, p := range packs {
				x.Add(p.ID, p.Blobs)
				if i == len(packs)/2 {
					checkLookups(t, x, reference(packs[:i+1]))
				}
			}
			x.Add(id.ID{0xee}, []pack.Entry{{ID: randomID(rng, false), Length: 1}}) // in the delta
			ref := reference(append(packs, PackBlobs{ID: id.ID{0xee}, Blobs: x.PackEntries(id.ID{0xee})}))
			checkLookups(t, x, ref)
			x.Merge()
			checkLookups(t, x, ref)
			var each []id.ID
			mustEach(t, x, func(b id.ID, loc Location) {
				if loc != ref[b] {
					t.Fatalf("Each: %s at %+v, want %+v", b.Short(), loc, ref[b])
				}
				each = append(each, b)
			})
			if len(each) != len(ref) || !slices.IsSortedFunc(each, func(a, b id.ID) int { return slices.Compare(a[:], b[:]) }) {
				t.Fatalf("Each visited %d blobs (want %d), sorted: %v", len(each), len(ref), slices.IsSortedFunc(each, func(a, b id.ID) int { return slices.Compare(a[:], b[:]) }))
			}
			for _, p := range packs {
				if got := x.PackEntries(p.ID); !slices.Equal(got, p.Blobs) && len(p.Blobs) > 0 {
					t.Fatalf("PackEntries(%s) differs", p.ID.Short())
				}
			}
		})
	}
}

func checkLookups(t *testing.T, x *Index, ref map[id.ID]Location) {
	t.Helper()
	if x.Len() != len(ref) {
		t.Fatalf("Len %d, want %d", x.Len(), len(ref))
	}
	for b, want := range ref {
		if got, ok := x.Lookup(t.Context(), b); !ok || got != want {
			t.Fatalf("Lookup(%s) = %+v %v, want %+v", b.Short(), got, ok, want)
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 100; i++ {
		if b := randomID(rng, i%2 == 0); x.Has(t.Context(), b) {
			t.Fatalf("Has(%s) for a blob never added", b.Short())
		}
	}
}

func TestRepeatedPack(t *testing.T) {
	blob := id.ID{0x42}
	old, newer := id.ID{1}, id.ID{2}
	x := New()
	x.Add(old, []pack.Entry{{ID: blob, Offset: 0, Length: 10}})
	x.Add(newer, []pack.Entry{{ID: blob, Offset: 5, Length: 10}})
	x.Add(old, []pack.Entry{{ID: id.ID{0x43}, Length: 10}}) // a known pack: ignored
	if x.Has(t.Context(), id.ID{0x43}) || len(mustPacks(t, x)) != 2 {
		t.Fatalf("a second listing of a known pack was added")
	}
	if loc, _ := x.Lookup(t.Context(), blob); loc.Pack != old {
		t.Fatalf("first added copy: pack %s", loc.Pack.Short())
	}
	if x.Len() != 1 {
		t.Fatalf("Len %d, want 1", x.Len())
	}
}

// benchIndex returns an index of n blobs (100 per pack) and their ids.
func benchIndex(n int) (*Index, []id.ID) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := New()
	ids := make([]id.ID, 0, n)
	for p := 0; len(ids) < n; p++ {
		entries := make([]pack.Entry, 100)
		for i := range entries {
			entries[i] = pack.Entry{ID: randomID(rng, false), Offset: uint32(i), Length: 1}
			ids = append(ids, entries[i].ID)
		}
		x.Add(randomID(rng, false), entries)
	}
	return x, ids
}

// BenchmarkIndex measures lookups in an index of a million blobs: of
// blobs it holds (Lookup) and of blobs it does not (Has, as a backup asks
// of every new chunk).
func BenchmarkIndex(b *testing.B) {
	x, ids := benchIndex(1_000_000)
	b.Run("Lookup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok := x.Lookup(b.Context(), ids[(i*7919)%len(ids)]); !ok {
				b.Fatal("missing")
			}
		}
	})
	rng := rand.New(rand.NewPCG(7, 8))
	misses := make([]id.ID, 4096)
	for i := range misses {
		misses[i] = randomID(rng, false)
	}
	b.Run("HasMiss", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if x.Has(b.Context(), misses[i%len(misses)]) {
				b.Fatal("found")
			}
		}
	})
}

// BenchmarkAdd adds blobs 100 per pack; b.N is the number of blobs.
func BenchmarkAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	entries := make([]pack.Entry, b.N)
	for i := range entries {
		entries[i] = pack.Entry{ID: randomID(rng, false), Length: 1}
	}
	x := New()
	b.ResetTimer()
	for start := 0; start < len(entries); start += 100 {
		x.Add(randomID(rng, false), entries[start:min(start+100, len(entries))])
	}
	b.StopTimer()
	if x.Len() != b.N {
		b.Fatalf("Len %d", x.Len())
	}
}

// FuzzIndex adds the packs of any decodable index file to an index and
// checks every lookup against a map of first locations.
func FuzzIndex(f *testing.F) {
	f.Add(sample().Encode())
	f.Add(encodeV1(sample()))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			return
		}
		x := New()
		var packs []PackBlobs
		seen := map[id.ID]bool{}
		for _, p := range file.Packs {
			x.Add(p.ID, p.Blobs)
			if !seen[p.ID] {
				seen[p.ID] = true
				packs = append(packs, p)
			}
		}
		checkLookups(t, x, reference(packs))
		x.Merge()
		checkLookups(t, x, reference(packs))
	})
}
