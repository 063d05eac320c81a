package tree

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

func TestRoundTrip(t *testing.T) {
	in := &Tree{Nodes: []Node{
		{Name: "b", Type: TypeFile, Mode: 0o644, Size: 3, MTime: 1, Content: []id.ID{{1}}},
		{Name: "a\xff\xfe", Type: TypeSymlink, LinkTarget: "../\xc3x", Mode: 0o777},
		{Name: "dir", Type: TypeDir, Subtree: id.ID{9}, Xattrs: []Xattr{{Name: "user.k", Value: []byte{0, 1}}}},
	}}
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Node{}
	for _, n := range in.Nodes {
		want[n.Name] = n
	}
	for _, n := range out.Nodes {
		if !reflect.DeepEqual(want[n.Name], n) {
			t.Errorf("node %q: got %+v want %+v", n.Name, n, want[n.Name])
		}
	}
	if out.Nodes[0].Name != "a\xff\xfe" {
		t.Errorf("nodes not sorted: first %q", out.Nodes[0].Name)
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := map[string]string{
		"dotdot":    `{"nodes":[{"name":"..","type":"file"}]}`,
		"dot":       `{"nodes":[{"name":".","type":"file"}]}`,
		"slash":     `{"nodes":[{"name":"a/b","type":"file"}]}`,
		"abs":       `{"nodes":[{"name":"/etc","type":"file"}]}`,
		"nul":       `{"nodes":[{"name":"a\u0000b","type":"file"}]}`,
		"rawslash":  `{"nodes":[{"name":"","name_raw":"Li4vYQ==","type":"file"}]}`,
		"empty":     `{"nodes":[{"name":"","type":"file"}]}`,
		"duplicate": `{"nodes":[{"name":"x","type":"file"},{"name":"x","type":"file"}]}`,
		"type":      `{"nodes":[{"name":"x","type":"weird"}]}`,
		"nosubtree": `{"nodes":[{"name":"x","type":"dir"}]}`,
		"garbage":   `{"nodes":`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(data)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"nodes":[{"name":"a","type":"file","content":["` + id.ID{1}.String() + `"]}]}`))
	f.Add([]byte(`{"nodes":[{"name":"","name_raw":"/w==","type":"symlink","target_raw":"Li4="}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Decode(data)
		if err != nil {
			return
		}
		for _, n := range tr.Nodes {
			if CheckName(n.Name) != nil {
				t.Fatalf("unsafe name %q accepted", n.Name)
			}
		}
		again, err := Encode(tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded tree does not decode: %v", err)
		}
	})
}
