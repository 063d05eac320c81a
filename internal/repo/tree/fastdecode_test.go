package tree

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
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

// TestCanonicalEdges: the fast path's own number and id parsing at the
// limits of each type gives what encoding/json gives, and leaves what
// encoding/json refuses (out of range) to it.
func TestCanonicalEdges(t *testing.T) {
	t.Parallel()
	const hexID = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	tests := []struct {
		name, node string
		fast       bool // the fast path takes it
	}{
		{"largest mode", `"mode":4294967295`, true},
		{"mode past uint32", `"mode":4294967296`, false},
		{"largest size", `"size":18446744073709551615`, true},
		{"size past uint64", `"size":18446744073709551616`, false},
		{"size far past uint64", `"size":99999999999999999999999`, false},
		{"largest mtime", `"mtime":9223372036854775807`, true},
		{"mtime past int64", `"mtime":9223372036854775808`, false},
		{"smallest mtime", `"mtime":-9223372036854775808`, true},
		{"mtime below int64", `"mtime":-9223372036854775809`, false},
		{"minus zero", `"mtime":-0`, true},
		{"lower-case id", `"subtree":"` + hexID + `"`, true},
		{"upper-case id", `"subtree":"` + strings.ToUpper(hexID) + `"`, true},
		{"short id", `"subtree":"` + hexID[2:] + `"`, false},
		{"id with a stray digit", `"subtree":"` + hexID + `0"`, false},
		{"id not hex", `"subtree":"` + hexID[:63] + `g"`, false},
		{"content ids", `"content":["` + hexID + `","` + hexID + `"]`, true},
		{"known type", `"type":"symlink"`, true},
		{"unknown type", `"type":"door"`, true},
		{"repeated owner", `"user":"u","group":"u"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(`{"nodes":[{"name":"a",` + tt.node + `}]}`)
			fast, ok := decodeCanonical(data)
			if ok != tt.fast {
				t.Fatalf("fast path took it: %v, want %v: %s", ok, tt.fast, data)
			}
			var slow Tree
			err := json.Unmarshal(data, &slow)
			if !ok {
				return
			}
			if err != nil {
				t.Fatalf("fast path accepted what encoding/json rejects (%v): %s", err, data)
			}
			if !reflect.DeepEqual(fast, &slow) {
				t.Fatalf("fast %+v\nslow %+v\nfrom %s", fast, slow, data)
			}
		})
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

// BenchmarkDecode decodes a directory of 500 small files as a backup
// writes it (each with one content id), the shape most of a walk's trees
// have.
func BenchmarkDecode(b *testing.B) {
	var tr Tree
	for i := range 500 {
		tr.Nodes = append(tr.Nodes, Node{Name: "file-" + strconv.Itoa(i) + ".txt", Type: TypeFile, Mode: 0o644,
			Size: uint64(1000 + i), MTime: 1_700_000_000_000_000_000 + int64(i), CTime: 1_700_000_000_000_000_000,
			Inode: uint64(1_000_000 + i), Links: 1, UID: 1000, GID: 1000, User: "user", Group: "user",
			Content: []id.ID{{byte(i), byte(i >> 8), 7}}})
	}
	data, err := Encode(&tr)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
