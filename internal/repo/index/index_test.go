package index

import (
	"bytes"
	"errors"
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
	if x.Len() != 3 || len(x.Packs()) != 3 {
		t.Fatalf("Len %d packs %d", x.Len(), len(x.Packs()))
	}
	loc, ok := x.Lookup(id.ID{3})
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

func FuzzDecode(f *testing.F) {
	f.Add(sample().Encode())
	f.Add([]byte("CSIX\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			return
		}
		if !bytes.Equal(file.Encode(), data) {
			t.Fatal("decoded file re-encodes differently")
		}
	})
}
