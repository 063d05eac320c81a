package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func sample() *File {
	return &File{Packs: []PackBlobs{
		{ID: id.ID{1}, Blobs: []pack.Entry{{Type: pack.DataBlob, ID: id.ID{2}, Offset: 0, Length: 100}, {Type: pack.TreeBlob, ID: id.ID{3}, Offset: 100, Length: 50}}},
		{ID: id.ID{4}, Blobs: []pack.Entry{{Type: pack.DataBlob, ID: id.ID{5}, Offset: 0, Length: 7}}},
		{ID: id.ID{6}},
	}}
}

func TestRoundTrip(t *testing.T) {
	f := sample()
	enc := f.Encode()
	got, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Encode(), enc) {
		t.Fatal("re-encoding differs")
	}
	x := New()
	for _, p := range got.Packs {
		x.Add(p.ID, p.Blobs)
	}
	if x.Len() != 3 || len(mustPacks(t, x)) != 3 {
		t.Fatalf("Len %d packs %d", x.Len(), len(mustPacks(t, x)))
	}
	loc, ok := x.Lookup(t.Context(), id.ID{3})
	if !ok || loc.Pack != (id.ID{1}) || loc.Offset != 100 || loc.Length != 50 || loc.Type != pack.TreeBlob {
		t.Fatalf("Lookup = %+v %v", loc, ok)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := sample().Encode()
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"magic", append([]byte("XXXX"), good[4:]...)},
		{"version", append(append([]byte("CSIX"), 9), good[5:]...)},
		{"truncated", good[:len(good)-3]},
		{"trailing", append(append([]byte(nil), good...), 0)},
		{"hugecount", append([]byte("CSIX\x01"), 0xff, 0xff, 0xff, 0x7f)},
		{"badtype", func() []byte { b := append([]byte(nil), good...); b[4+1+4+36] = 7; return b }()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Decode(c.data); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
		})
	}
}

// encodeV1 writes f in version 1 (no plain lengths), as releases before
// version 2 did.
func encodeV1(f *File) []byte {
	out := append([]byte(magic), versionNoPlain)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(f.Packs)))
	for _, p := range f.Packs {
		out = append(out, p.ID[:]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p.Blobs)))
		for _, e := range p.Blobs {
			out = append(out, byte(e.Type))
			out = append(out, e.ID[:]...)
			out = binary.LittleEndian.AppendUint32(out, e.Offset)
			out = binary.LittleEndian.AppendUint32(out, e.Length)
		}
	}
	return out
}

func TestPlainLengths(t *testing.T) {
	f := sample()
	f.Packs[0].Blobs[0].Plain = 4000
	f.Packs[0].Blobs[1].Plain = 0 // unknown (carried over from a version 1 file)
	f.Packs[1].Blobs[0].Plain = pack.MaxBlobSize
	cases := []struct {
		name      string
		data      []byte
		wantPlain []uint32
	}{
		{"version 2", f.Encode(), []uint32{4000, 0, pack.MaxBlobSize}},
		{"version 1 reads with unknown plain lengths", encodeV1(f), []uint32{0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.data)
			if err != nil {
				t.Fatal(err)
			}
			plain := []uint32{got.Packs[0].Blobs[0].Plain, got.Packs[0].Blobs[1].Plain, got.Packs[1].Blobs[0].Plain}
			if !slices.Equal(plain, c.wantPlain) {
				t.Fatalf("plain lengths %v, want %v", plain, c.wantPlain)
			}
			if !got.Packs[0].Blobs[1].SameLocation(f.Packs[0].Blobs[1]) {
				t.Fatalf("entry %+v, want %+v", got.Packs[0].Blobs[1], f.Packs[0].Blobs[1])
			}
		})
	}
	t.Run("plain length beyond any blob", func(t *testing.T) {
		g := sample()
		g.Packs[0].Blobs[0].Plain = pack.MaxBlobSize + 1
		if _, err := Decode(g.Encode()); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode = %v, want ErrCorrupt", err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(sample().Encode())
	f.Add(encodeV1(sample()))
	f.Add([]byte("CSIX\x01\x00\x00\x00\x00"))
	f.Add([]byte("CSIX\x02\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			return
		}
		enc := file.Encode()
		if data[len(magic)] == version && !bytes.Equal(enc, data) {
			t.Fatal("decoded file re-encodes differently")
		}
		if data[len(magic)] == versionNoPlain && !bytes.Equal(encodeV1(file), data) {
			t.Fatal("decoded version 1 file re-encodes differently")
		}
		again, err := Decode(enc)
		if err != nil || !reflect.DeepEqual(again, file) {
			t.Fatalf("re-encoded file decodes to %+v, %v", again, err)
		}
	})
}

// mustPacks is x.Packs, failing the test on its error.
func mustPacks(t testing.TB, x *Index) []id.ID {
	t.Helper()
	p, err := x.Packs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustHasPack is x.HasPack, failing the test on its error.
func mustHasPack(t testing.TB, x *Index, p id.ID) bool {
	t.Helper()
	has, err := x.HasPack(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return has
}

// mustEach is x.Each, failing the test on its error.
func mustEach(t testing.TB, x *Index, fn func(blob id.ID, loc Location)) {
	t.Helper()
	if err := x.Each(fn); err != nil {
		t.Fatal(err)
	}
}
