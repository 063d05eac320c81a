package tree

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// TestNodeEqualCoversEveryField changes each field of a node in turn (found
// by reflection, so a field added later is covered too) and requires Equal
// to say false exactly when the encoded tree changes.
func TestNodeEqualCoversEveryField(t *testing.T) {
	t.Parallel()
	base := Node{Name: "f", Type: TypeFile, Mode: 0o644, Size: 3, MTime: 1, CTime: 2, Device: 3, Inode: 4,
		Links: 1, UID: 5, GID: 6, User: "u", Group: "g", LinkTarget: "t", Rdev: 7, Flags: 0x10, BirthTime: 8, BSDFlags: 0x8000, WinAttrs: 0x2, SDDL: "D:P(A;;FA;;;WD)",
		Xattrs: []Xattr{{Name: "user.a", Value: []byte("v")}}, Content: []id.ID{{1}}, Subtree: id.ID{2}, Cloud: &Cloud{ID: "i", Hash: "md5:00"}}
	encode := func(n Node) []byte {
		data, err := Encode(&Tree{Nodes: []Node{n}})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			changed := base
			changed.Xattrs = append([]Xattr(nil), base.Xattrs...)
			v := reflect.ValueOf(&changed).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Uint32, reflect.Uint64:
				v.SetUint(v.Uint() + 1)
			case reflect.Int64:
				v.SetInt(v.Int() + 1)
			case reflect.Array: // id.ID
				v.Index(0).SetUint(v.Index(0).Uint() + 1)
			case reflect.Pointer: // Cloud: each of its fields in turn
				for j := range reflect.TypeOf(Cloud{}).NumField() {
					c := *base.Cloud
					reflect.ValueOf(&c).Elem().Field(j).SetString("changed")
					if changed.Cloud = &c; base.Equal(&changed) || bytes.Equal(encode(base), encode(changed)) {
						t.Errorf("a change of Cloud field %d goes unseen", j)
					}
				}
				changed.Cloud = nil
			case reflect.Slice:
				switch f.Name {
				case "Xattrs":
					changed.Xattrs = []Xattr{{Name: "user.a", Value: []byte("w")}}
				case "Content":
					changed.Content = []id.ID{{1}, {2}}
				default: // NameRaw, TargetRaw: cleared by Encode when valid UTF-8
					changed.Name, changed.LinkTarget = "f\xff", "t\xff"
				}
			default:
				t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
			}
			if base.Equal(&changed) {
				t.Errorf("Equal does not see a change of %s", f.Name)
			}
			if bytes.Equal(encode(base), encode(changed)) {
				t.Errorf("a change of %s does not change the encoding", f.Name)
			}
		})
	}
	t.Run("nil and empty", func(t *testing.T) {
		a, b := base, base
		a.Content, b.Content = nil, []id.ID{}
		a.Xattrs, b.Xattrs = nil, []Xattr{}
		if !a.Equal(&b) || !bytes.Equal(encode(a), encode(b)) {
			t.Error("nil and empty omitted slices: want equal nodes and encodings")
		}
		a.Xattrs, b.Xattrs = []Xattr{{Name: "user.a"}}, []Xattr{{Name: "user.a", Value: []byte{}}}
		if a.Equal(&b) != bytes.Equal(encode(a), encode(b)) {
			t.Errorf("nil and empty attribute value: Equal %v but encodings equal %v", a.Equal(&b), bytes.Equal(encode(a), encode(b)))
		}
	})
}
