package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// TestBatchPlanRequests restores 1,200 small files of 6 directories (the
// backup packs them interleaved) from a real local store and counts the
// ranged reads of data packs: over a store that declares its requests dear
// (as S3 does) one per pack, bar the cut that shares the last files among
// the workers; over a local one, batches of at most maxBatchFiles files.
func TestBatchPlanRequests(t *testing.T) {
	src := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	const dirs, perDir = 6, 200
	for d := range dirs {
		sub := filepath.Join(src, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range perDir {
			data := make([]byte, 1024+rng.IntN(3072))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d", i)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		remote  bool
		workers int
		// least and most data reads for files in packs
		least, most func(files, packs int) int
	}{
		{"remote: one read per pack", true, 1,
			func(_, packs int) int { return packs }, func(_, packs int) int { return packs }},
		{"remote: the last files shared among the workers", true, 4,
			func(_, packs int) int { return 4 }, func(_, packs int) int { return packs + 3 }},
		{"local: batches of maxBatchFiles", false, 1,
			func(files, _ int) int { return (files + maxBatchFiles - 1) / maxBatchFiles },
			func(files, packs int) int { return (files+maxBatchFiles-1)/maxBatchFiles + packs - 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			reads := map[string]int{} // ranged reads and streams per key
			var st store.Store = local.New(t.TempDir())
			if tc.remote {
				st = remoteStore{st}
			}
			counted := wrap.NewLogging(st, func(format string, args ...any) {
				if len(args) > 1 && (args[0] == "GETRANGE" || args[0] == "OPENRANGE") {
					mu.Lock()
					reads[args[1].(string)]++
					mu.Unlock()
				}
			})
			r, l, res := backedUpInto(t, counted, src)
			packs := dataPacks(t, r, res.Snapshot.Tree)
			clear(reads)
			out := filepath.Join(t.TempDir(), "out")
			got, err := Run(context.Background(), r, l, res.Snapshot.Tree, Options{Output: out, Workers: tc.workers})
			if err != nil || got.Files != dirs*perDir {
				t.Fatalf("Run: %v, %d files", err, got.Files)
			}
			data := 0
			for key, n := range reads {
				if _, ok := packs[key]; ok {
					data += n
				}
			}
			files := dirs * perDir
			if least, most := tc.least(files, len(packs)), tc.most(files, len(packs)); data < least || data > most {
				t.Errorf("%d reads of %d data packs, want %d to %d", data, len(packs), least, most)
			}
		})
	}
}

// dataPacks returns the store keys of the packs holding the content of
// the files below tree root.
func dataPacks(t *testing.T, r *repo.Repository, root id.ID) map[string]struct{} {
	t.Helper()
	packs := map[string]struct{}{}
	var visit func(tid id.ID)
	visit = func(tid id.ID) {
		tr, err := r.LoadTree(context.Background(), tid)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tr.Nodes {
			switch n.Type {
			case tree.TypeDir:
				visit(n.Subtree)
			case tree.TypeFile:
				for _, c := range n.Content {
					loc, ok := r.Index().Lookup(t.Context(), c)
					if !ok {
						t.Fatalf("%s: blob %s not in the index", n.Name, c.Short())
					}
					packs[repo.PackKey(loc.Pack)] = struct{}{}
				}
			}
		}
	}
	visit(root)
	if len(packs) == 0 {
		t.Fatal("no data packs")
	}
	return packs
}

// TestBatchedMultiChunkFiles restores files of several chunks each, which
// batches read together with their neighbours: one read per pack when all
// is intact; with one chunk corrupt, that file alone is reported damaged
// and left out, and the others come back intact.
func TestBatchedMultiChunkFiles(t *testing.T) {
	src := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 12
	for i := range n {
		data := make([]byte, 40<<10)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, damage := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged=%v", damage), func(t *testing.T) {
			dir := t.TempDir()
			var mu sync.Mutex
			reads := map[string]int{}
			counted := wrap.NewLogging(remoteStore{local.New(dir)}, func(format string, args ...any) {
				if len(args) > 1 && (args[0] == "GETRANGE" || args[0] == "OPENRANGE") {
					mu.Lock()
					reads[args[1].(string)]++
					mu.Unlock()
				}
			})
			r, l, res := backedUpWith(t, counted, src, repo.InitOptions{
				Chunker: repo.ChunkerParams{Min: 1 << 10, Avg: 4 << 10, Max: 16 << 10}})
			packs := dataPacks(t, r, res.Snapshot.Tree)
			victim := ""
			if damage {
				victim = "f05"
				corruptMiddleChunk(t, r, res.Snapshot.Tree, dir, victim)
			}
			clear(reads)
			out := filepath.Join(t.TempDir(), "out")
			got, err := Run(context.Background(), r, l, res.Snapshot.Tree, Options{Output: out, Workers: 1})
			if damage && (!errors.Is(err, ErrDamaged) || len(got.Damaged) != 1 || got.Damaged[0] != victim) {
				t.Fatalf("Run = %v, damaged %v; want ErrDamaged, [%s]", err, got.Damaged, victim)
			}
			if !damage && err != nil {
				t.Fatal(err)
			}
			for i := range n {
				name := fmt.Sprintf("f%02d", i)
				data, err := os.ReadFile(filepath.Join(out, name))
				if name == victim {
					if !errors.Is(err, os.ErrNotExist) {
						t.Errorf("damaged file left behind: %v", err)
					}
					continue
				}
				want, _ := os.ReadFile(filepath.Join(src, name)) // written above
				if err != nil || !bytes.Equal(data, want) {
					t.Errorf("%s: %v, content ok=%v", name, err, bytes.Equal(data, want))
				}
			}
			data := 0
			for key, k := range reads {
				if _, ok := packs[key]; ok {
					data += k
				}
			}
			if !damage && data != len(packs) {
				t.Errorf("%d reads of %d data packs, want one each", data, len(packs))
			}
		})
	}
}

// corruptMiddleChunk flips a byte of the middle chunk of file name (at the
// root of tree root) in the local store at dir.
func corruptMiddleChunk(t *testing.T, r *repo.Repository, root id.ID, dir, name string) {
	t.Helper()
	tr, err := r.LoadTree(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tr.Nodes {
		if n.Name != name {
			continue
		}
		if len(n.Content) < 3 {
			t.Fatalf("%s has %d chunks, want several", name, len(n.Content))
		}
		loc, _ := r.Index().Lookup(t.Context(), n.Content[len(n.Content)/2])
		packFile := filepath.Join(dir, filepath.FromSlash(repo.PackKey(loc.Pack)))
		raw, err := os.ReadFile(packFile)
		if err != nil {
			t.Fatal(err)
		}
		raw[loc.Offset+loc.Length/2] ^= 0xff
		if err := os.WriteFile(packFile, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s not found", name)
}
