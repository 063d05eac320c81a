package snapshot

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

func sampleSnapshot() *Snapshot {
	return &Snapshot{
		Time: time.Date(2026, 3, 7, 9, 0, 0, 123, time.UTC), Tree: id.ID{1, 2, 3}, Source: "local:/home/me",
		Hostname: "host", Username: "me", Path: "/home/me", Tags: []string{"daily", "é"}, Parent: id.ID{9},
		Summary: Summary{FilesNew: 3, BytesTotal: 1 << 40, Errors: 1, DurationSeconds: 1.5},
		Program: "cloudstic", Original: id.ID{8}, Nonce: []byte("0123456789abcdef"),
		Excludes: &ExcludeSet{Patterns: []string{"cache/", "!keep.log", `\#x`}, IfPresent: []string{".nobackup"}, Caches: true,
			LargerThan: 1 << 30, OneFileSystem: true},
		Volume: &Volume{UUID: "956bed6d-2f80-40e0-95e2-f5e3e5bb6f4f", Path: "/photos"},
	}
}

func FuzzDecode(f *testing.F) {
	data, err := Encode(sampleSnapshot())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","excludes":{"patterns":["*.tmp"],"larger_than":-1}}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","excludes":null}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `"}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","original":"` + id.ID{7}.String() + `","tags":["a"]}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","original":"0102"}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","original":null}`))
	f.Add([]byte(`{"tree":"` + id.ID{1}.String() + `","volume":{"uuid":"","path":"/"}}`))
	f.Add([]byte(`{"tree":"00"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if s.Tree.IsZero() {
			t.Fatal("snapshot without a root tree accepted")
		}
		enc, err := Encode(s)
		if err != nil {
			return // e.g. a time whose year JSON cannot hold after decoding; nothing re-encodes snapshots
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
		if enc2, err := Encode(again); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding is not stable: %v\n%s\n%s", err, enc, enc2)
		}
	})
}
