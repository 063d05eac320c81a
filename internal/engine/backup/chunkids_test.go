package backup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// TestChunkIDsInOrder backs up files that the file workers cut with a
// chunker (larger than the test repository's 4 KiB minimum chunk) and
// whose ids the blob workers compute, and requires each file's content to
// be the ids of its chunks, in order, as a chunker over the whole file
// cuts them: across many buffer refills, with a chunk repeated within a
// file and between files (stored once), and the file restored byte for
// byte.
func TestChunkIDsInOrder(t *testing.T) {
	t.Parallel()
	random := func(seed uint64, n int) []byte {
		dir := t.TempDir()
		checktest.WriteFile(t, dir, "f", seed, n)
		b, err := os.ReadFile(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	block := random(1, 40<<10)
	tests := []struct {
		name  string
		files map[string][]byte
	}{
		{"one refill's worth", map[string][]byte{"a": random(2, 100<<10)}},
		{"many refills", map[string][]byte{"a": random(3, 3<<20)}},
		{"zeros: every chunk the same", map[string][]byte{"z": make([]byte, 2<<20+5)}},
		{"a block repeated within and across files", map[string][]byte{
			"a": slices.Concat(block, random(4, 9000), block, block, random(5, 300<<10), block),
			"b": slices.Concat(random(6, 70<<10), block, block),
		}},
		{"several files at once", map[string][]byte{
			"a": random(7, 1<<20), "b": random(8, 600<<10), "c": random(9, 5000), "d": random(10, 2<<20),
		}},
		// Files of about a chunker buffer (2*Max, 128 KiB here): each is
		// read while the chunks of the one before are being saved.
		{"many files of a buffer or less", func() map[string][]byte {
			m := map[string][]byte{}
			for i := range 24 {
				m[fmt.Sprintf("f%02d", i)] = random(uint64(100+i), 20<<10+i*5<<10)
			}
			return m
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st := checktest.NewRepo(t, t.TempDir())
			res := backupOf(t, st, src, nil, time.Now().Add(time.Hour))
			r := checktest.Open(t, st)
			ctx := context.Background()
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			root, err := r.LoadTree(ctx, res.Snapshot.Tree)
			if err != nil {
				t.Fatal(err)
			}
			distinct := map[id.ID]bool{}
			for _, n := range root.Nodes {
				want := chunkIDs(t, r, tc.files[n.Name])
				if !slices.Equal(n.Content, want) {
					t.Errorf("%s: content is %d ids, not those of its %d chunks in order", n.Name, len(n.Content), len(want))
				}
				for _, c := range want {
					distinct[c] = true
					if !r.Index().Has(t.Context(), c) {
						t.Errorf("%s: chunk %s is not stored", n.Name, c.Short())
					}
				}
			}
			if len(root.Nodes) != len(tc.files) {
				t.Fatalf("%d files in the snapshot, want %d", len(root.Nodes), len(tc.files))
			}
			// The distinct chunks, each once, and the root tree.
			if got := r.Index().Len(); got != len(distinct)+1 {
				t.Errorf("%d blobs indexed, want the %d distinct chunks and the root tree", got, len(distinct))
			}
			checktest.RestoreEqual(t, st, res.ID, src)
		})
	}
}

// chunkIDs cuts data with r's chunker and returns the ids of its chunks.
func chunkIDs(t *testing.T, r *repo.Repository, data []byte) []id.ID {
	t.Helper()
	cfg := r.Config().Chunker
	c, err := chunker.New(bytes.NewReader(data), chunker.NewGear(r.Key().ChunkerKey()),
		chunker.Params{Min: cfg.Min, Avg: cfg.Avg, Max: cfg.Max})
	if err != nil {
		t.Fatal(err)
	}
	var ids []id.ID
	for {
		chunk, err := c.Next()
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Key().ID(chunk))
	}
}
