package tree

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// canonicalSamples are trees that exercise every field, as Encode writes them.
func canonicalSamples(t testing.TB) [][]byte {
	trees := []Tree{
		{Nodes: []Node{}},
		{Nodes: []Node{{Name: "a", Type: TypeFile, Mode: 0o644, Size: 10, MTime: -5, CTime: 1 << 62, Device: 1 << 63,
			Inode: 9, Links: 2, UID: 1<<32 - 1, GID: 7, User: "ü", Group: "g", Content: []id.ID{{1}, {2}},
			Xattrs: []Xattr{{Name: "user.a", Value: []byte("v")}, {Name: "user.nil"}, {Name: "user.empty", Value: []byte{}}}}}},
		{Nodes: []Node{{Name: "d", Type: TypeDir, Mode: 0o755, Subtree: id.ID{3}}, {Name: "l", Type: TypeSymlink, LinkTarget: "../x"},
			{Name: "raw\xff", Type: TypeSymlink, LinkTarget: "t\xfe"}, {Name: "dev", Type: TypeCharDev, Rdev: 1025}, {Name: "flagged", Type: TypeFile, Flags: 0x30},
			{Name: "mac", Type: TypeFile, BirthTime: -3, BSDFlags: 0x8002}, {Name: "win", Type: TypeDir, Subtree: id.ID{4}, BirthTime: 1 << 60, WinAttrs: 0x27, SDDL: "O:S-1-5-21-1-2-3-1001G:S-1-5-21-1-2-3-513D:PAI(A;OICIID;FA;;;SY)(A;;0x1200a9;;;WD)"}}},
		// Escaped characters ("<" is written \u003c) are left to encoding/json.
		{Nodes: []Node{{Name: "a<b", Type: TypeFile, Group: "g&"}}},
	}
	var out [][]byte
	for i := range trees {
		data, err := Encode(&trees[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// TestCanonicalTreesTakeTheFastPath: what Encode writes is decoded by
// decodeCanonical (but for strings with escapes), to the same tree as
// encoding/json gives; Decode gives it either way.
func TestCanonicalTreesTakeTheFastPath(t *testing.T) {
	t.Parallel()
	for _, data := range canonicalSamples(t) {
		escaped := bytes.Contains(data, []byte(`\`))
		fast, ok := decodeCanonical(data)
		if ok == escaped {
			t.Fatalf("fast path decoded = %v, want %v: %s", ok, !escaped, data)
		}
		if !ok {
			if fast, err := Decode(data); err != nil || len(fast.Nodes) != 1 || fast.Nodes[0].Name != "a<b" {
				t.Fatalf("Decode of an escaped tree: %+v, %v", fast, err)
			}
			continue
		}
		var slow Tree
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, &slow) {
			t.Fatalf("fast %+v\nslow %+v\nfrom %s", fast, slow, data)
		}
	}
}

// FuzzDecodeCanonical: whenever the fast path accepts an input, encoding/json
// accepts it too and gives exactly the same tree (nil and empty slices
// included).
func FuzzDecodeCanonical(f *testing.F) {
	for _, data := range canonicalSamples(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"nodes":[{"name":"a","mode":01}]}`))
	f.Add([]byte(`{"nodes":[{"name":"a","name":"b"}]}`))
	f.Add([]byte(`{"nodes":[{"name":"a\u0041"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeCanonical(data)
		if !ok {
			return
		}
		var slow Tree
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
		}
		if !reflect.DeepEqual(fast, &slow) {
			t.Fatalf("fast %+v\nslow %+v\nfrom %q", fast, slow, data)
		}
	})
}
