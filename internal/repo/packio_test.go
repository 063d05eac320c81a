package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// packFixture is a repository holding one pack of three data blobs and
// one pack of one tree, with its index loaded.
type packFixture struct {
	r     *Repository
	st    store.Store
	data  map[id.ID][]byte
	tree  id.ID
	dataP id.ID // the data pack
}

func newPackFixture(t *testing.T) *packFixture {
	t.Helper()
	ctx := context.Background()
	r, st := newTestRepo(t)
	f := &packFixture{r: r, st: st, data: map[id.ID][]byte{}}
	s := writerFor(t, r, st).NewSaver(ctx, 1, pack.Zstd)
	for i := range 3 {
		data := bytes.Repeat([]byte{byte(i + 1)}, 1000+i)
		bid := r.Key().ID(data)
		f.data[bid] = data
		if _, err := s.Save(ctx, pack.DataBlob, bid, data); err != nil {
			t.Fatal(err)
		}
	}
	tr := &tree.Tree{Nodes: []tree.Node{{Name: "f", Type: tree.TypeFile, Size: 1000}}}
	enc, err := tree.Encode(tr)
	if err != nil {
		t.Fatal(err)
	}
	f.tree = r.Key().ID(enc)
	if _, err := s.Save(ctx, pack.TreeBlob, f.tree, enc); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for bid := range f.data {
		loc, _ := r.Index().Lookup(t.Context(), bid)
		f.dataP = loc.Pack
	}
	return f
}

// damage rewrites the data pack with edit applied to its bytes.
func (f *packFixture) damage(t *testing.T, edit func([]byte) []byte) {
	t.Helper()
	ctx := context.Background()
	data, err := f.st.Get(ctx, PackKey(f.dataP), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Put(ctx, PackKey(f.dataP), edit(data), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestReadAndVerifyPack: ReadPack returns a pack only when its content
// hashes to its name; VerifyPack reports each kind of damage and keeps
// checking the rest.
func TestReadAndVerifyPack(t *testing.T) {
	ctx := context.Background()
	firstBlob := func(f *packFixture) pack.Entry {
		e := f.r.Index().PackEntries(f.dataP)
		return e[0]
	}
	tests := []struct {
		name      string
		edit      func(f *packFixture) func([]byte) []byte
		readErr   error // ReadPack's
		verifyErr error // VerifyPack's
		mismatch  bool
		headerErr bool
		badBlobs  int
	}{
		{name: "sound"},
		{name: "flipped byte in a blob", edit: func(f *packFixture) func([]byte) []byte {
			e := firstBlob(f)
			return func(b []byte) []byte { b[e.Offset+e.Length/2] ^= 1; return b }
		}, readErr: ErrCorrupt, mismatch: true, badBlobs: 1},
		{name: "flipped byte in the header", edit: func(*packFixture) func([]byte) []byte {
			return func(b []byte) []byte { b[len(b)-10] ^= 1; return b }
		}, readErr: ErrCorrupt, mismatch: true, headerErr: true},
		{name: "truncated", edit: func(*packFixture) func([]byte) []byte {
			return func(b []byte) []byte { return b[:2] }
		}, readErr: ErrCorrupt, mismatch: true, headerErr: true},
		{name: "missing", edit: nil, readErr: store.ErrNotFound, verifyErr: store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newPackFixture(t)
			entries := f.r.Index().PackEntries(f.dataP)
			switch {
			case tc.edit != nil:
				f.damage(t, tc.edit(f))
			case tc.readErr != nil:
				if err := f.st.Delete(ctx, PackKey(f.dataP)); err != nil {
					t.Fatal(err)
				}
			}
			data, err := f.r.ReadPack(ctx, f.dataP)
			if !errors.Is(err, tc.readErr) {
				t.Fatalf("ReadPack = %v, want %v", err, tc.readErr)
			}
			if err == nil && id.ID(sha256.Sum256(data)) != f.dataP {
				t.Fatal("ReadPack returned bytes that do not hash to the pack's name")
			}
			v, err := f.r.VerifyPack(ctx, f.dataP, entries)
			if !errors.Is(err, tc.verifyErr) {
				t.Fatalf("VerifyPack = %v, want %v", err, tc.verifyErr)
			}
			if err != nil {
				return
			}
			if v.NameMismatch != tc.mismatch || (v.HeaderErr != nil) != tc.headerErr || v.BadBlobs != tc.badBlobs {
				t.Fatalf("VerifyPack = %+v, want mismatch %v, header error %v, %d bad blobs", v, tc.mismatch, tc.headerErr, tc.badBlobs)
			}
			if v.HeaderErr != nil && !IsDamage(v.HeaderErr) {
				t.Fatalf("HeaderErr = %v, want damage", v.HeaderErr)
			}
			if v.HeaderErr == nil && len(v.Header) != len(entries) {
				t.Fatalf("header names %d blobs, want %d", len(v.Header), len(entries))
			}
			if tc.badBlobs > 0 && !IsDamage(v.FirstBadBlob) {
				t.Fatalf("FirstBadBlob = %v, want damage", v.FirstBadBlob)
			}
		})
	}
}

// TestReadPackRange: a range is read into the caller's buffer when it is
// large enough, and a range past the end of the pack is an error.
func TestReadPackRange(t *testing.T) {
	ctx := context.Background()
	f := newPackFixture(t)
	dec := f.r.Codec().NewDecoder()
	buf := make([]byte, 0, 64<<10)
	for bid, want := range f.data {
		loc, _ := f.r.Index().Lookup(t.Context(), bid)
		sealed, err := f.r.ReadPackRange(ctx, loc.Pack, int64(loc.Offset), int64(loc.Length), buf)
		if err != nil {
			t.Fatal(err)
		}
		if &sealed[0] != &buf[:1][0] {
			t.Error("the range was not read into the buffer given")
		}
		got, err := dec.DecodeInPlace(sealed, bid)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("blob %s: %v", bid.Short(), err)
		}
	}
	loc, _ := f.r.Index().Lookup(t.Context(), f.tree)
	if _, err := f.r.ReadPackRange(ctx, f.dataP, 1<<20, 10, nil); err == nil {
		t.Fatal("a range past the end of the pack was read")
	}
	if _, err := f.r.ReadPackRange(ctx, loc.Pack, int64(loc.Offset), int64(loc.Length), nil); err != nil {
		t.Fatalf("nil buffer: %v", err)
	}
}

// TestLoadTreeAt: a tree is read from a location another index gives,
// with the repository's own index empty; a location that holds something
// else is damage.
func TestLoadTreeAt(t *testing.T) {
	ctx := context.Background()
	f := newPackFixture(t)
	loc, _ := f.r.Index().Lookup(t.Context(), f.tree)
	fresh := f.r.Fresh() // empty index
	tr, err := fresh.LoadTreeAt(ctx, f.tree, loc)
	if err != nil || len(tr.Nodes) != 1 || tr.Nodes[0].Name != "f" {
		t.Fatalf("LoadTreeAt = %+v, %v", tr, err)
	}
	for bid := range f.data {
		wrong, _ := f.r.Index().Lookup(t.Context(), bid)
		if _, err := fresh.LoadTreeAt(ctx, f.tree, wrong); !IsDamage(err) {
			t.Fatalf("tree read from a data blob's location: %v, want damage", err)
		}
		break
	}
	gone := index.Location{Pack: id.ID{1}, Entry: loc.Entry}
	if _, err := fresh.LoadTreeAt(ctx, f.tree, gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("tree in a missing pack: %v, want store.ErrNotFound", err)
	}
}
