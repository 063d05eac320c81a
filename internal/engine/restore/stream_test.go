package restore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestPlanStream: a streamed batch takes its chunks in the pack's order;
// a file whose chunks lie out of its own order is written at the offsets
// the index's plain lengths give; on its own goes a file out of order
// whose plain lengths are unknown or do not add up to its size, one that
// repeats a location an earlier file uses, and one that would keep more
// than maxOpenFiles files open.
func TestPlanStream(t *testing.T) {
	type file struct {
		size uint64
		locs []index.Location
	}
	// at returns chunks of 10 bytes at offs, of plain length plain each.
	at := func(plain uint32, offs ...uint32) []index.Location {
		var locs []index.Location
		for _, o := range offs {
			locs = append(locs, index.Location{Entry: pack.Entry{Offset: o, Length: 10, Plain: plain}})
		}
		return locs
	}
	many := func(n int) []file {
		// n files open at once: file k's chunks at 10k and 1000+10k.
		var files []file
		for k := range n {
			files = append(files, file{20, at(10, uint32(10*k), uint32(1000+10*k))})
		}
		return files
	}
	tests := []struct {
		name      string
		files     []file
		wantOrder []uint32 // offsets of the pieces, in stream order
		wantAlone []int
		wantAt    [][]int64
	}{
		{"interleaved files", []file{{2, at(1, 0, 20)}, {2, at(1, 10, 30)}}, []uint32{0, 10, 20, 30}, nil, [][]int64{nil, nil}},
		{"out of order, placed", []file{{1, at(1, 0)}, {14, at(7, 30, 10)}}, []uint32{0, 10, 30}, nil, [][]int64{nil, {0, 7}}},
		{"out of order, lengths unknown", []file{{1, at(1, 0)}, {14, at(0, 30, 10)}}, []uint32{0}, []int{1}, nil},
		{"out of order, lengths not the size", []file{{1, at(1, 0)}, {15, at(7, 30, 10)}}, []uint32{0}, []int{1}, nil},
		{"location used twice", []file{{2, at(1, 0, 10)}, {1, at(1, 10)}}, []uint32{0, 10}, []int{1}, nil},
		{"chunk repeated in a file", []file{{2, at(1, 0, 0)}}, nil, []int{0}, nil},
		{"as many open files as allowed", many(maxOpenFiles), nil, nil, nil},
		{"one more open file than allowed", many(maxOpenFiles + 1), nil, []int{maxOpenFiles}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &batch{}
			for _, f := range tc.files {
				b.locs = append(b.locs, f.locs)
				b.files = append(b.files, entry{node: tree.Node{Size: f.size}})
			}
			plan := planStream(b)
			if !slices.Equal(plan.alone, tc.wantAlone) {
				t.Errorf("alone %v, want %v", plan.alone, tc.wantAlone)
			}
			var order []uint32
			for k, p := range plan.pieces {
				order = append(order, p.loc.Offset)
				if k > 0 && p.loc.Offset < plan.pieces[k-1].loc.Offset {
					t.Errorf("pieces out of the pack's order: %v", plan.pieces)
				}
				if b.locs[p.i][p.j] != p.loc {
					t.Errorf("piece %+v is not chunk %d of file %d", p, p.j, p.i)
				}
			}
			if tc.wantOrder != nil && !slices.Equal(order, tc.wantOrder) {
				t.Errorf("stream order %v, want %v", order, tc.wantOrder)
			}
			for i, want := range tc.wantAt {
				if !slices.Equal(plan.at[i], want) {
					t.Errorf("file %d at %v, want %v", i, plan.at[i], want)
				}
			}
		})
	}
}

// TestStreamedBatchIsolatesDamage: from a store across a network, files
// of several chunks (packed out of order by concurrent blob workers)
// restored from one stream of their pack come out byte for byte and read
// back right; once one of their chunks in the middle is corrupted, that
// file alone is reported damaged and not left behind.
func TestStreamedBatchIsolatesDamage(t *testing.T) {
	ctx := context.Background()
	storeDir, src := t.TempDir(), t.TempDir()
	const n = 8
	for i := range n {
		// Random, so that no chunk is shared with another file.
		data := make([]byte, 200<<10)
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		for k := range data {
			data[k] = byte(rng.Uint32())
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := repo.InitOptions{Chunker: repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10}, PackSize: 8 << 20}
	r, l, res := backedUpWith(t, remoteStore{local.New(storeDir)}, src, opts)
	tr, err := r.LoadTree(ctx, res.Snapshot.Tree)
	if err != nil {
		t.Fatal(err)
	}
	node := tr.Nodes[3] // f3
	if len(node.Content) < 3 {
		t.Fatalf("%s has %d chunks: the test needs one in the middle", node.Name, len(node.Content))
	}
	// Intact, every file reads back right (Verify: the lengths of chunks
	// written out of order are kept in the file's order).
	got, err := Run(ctx, r, l, res.Snapshot.Tree, Options{Output: filepath.Join(t.TempDir(), "out"), Verify: true})
	if err != nil || got.Files != n || len(got.VerifyFailed) > 0 {
		t.Fatalf("Run = %v, %d files, verify failed %v; want %d files", err, got.Files, got.VerifyFailed, n)
	}

	loc, ok := r.Index().Lookup(t.Context(), node.Content[len(node.Content)/2])
	if !ok {
		t.Fatal("victim chunk not indexed")
	}
	packFile := filepath.Join(storeDir, filepath.FromSlash(repo.PackKey(loc.Pack)))
	raw, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	raw[loc.Offset+loc.Length/2] ^= 0xff
	if err := os.WriteFile(packFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "out")
	got, err = Run(ctx, r, l, res.Snapshot.Tree, Options{Output: out})
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("Run = %v, want ErrDamaged", err)
	}
	if !slices.Equal(got.Damaged, []string{node.Name}) || got.Files != n-1 {
		t.Fatalf("damaged %v, files %d; want [%s] and %d", got.Damaged, got.Files, node.Name, n-1)
	}
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		data, err := os.ReadFile(filepath.Join(out, name))
		if name == node.Name {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("damaged file left behind: %v", err)
			}
			continue
		}
		want, _ := os.ReadFile(filepath.Join(src, name)) // written above
		if err != nil || string(data) != string(want) {
			t.Errorf("%s: %v, content ok=%v", name, err, string(data) == string(want))
		}
	}
}
