package restore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestRestoreAcrossNetwork restores, in the remote shape, a tree of every
// kind of work a restore does (small files batched per pack, files of
// many chunks read in runs, a repeated content, an empty file), byte for
// byte.
func TestRestoreAcrossNetwork(t *testing.T) {
	t.Parallel()
	// The store declares a network's request cost: the restore takes the
	// remote shape (more workers than decoders, shorter ranges).
	st := restore.AcrossNetwork(checktest.NewRepo(t, t.TempDir()))
	src := t.TempDir()
	seed := uint64(1)
	for i := range 300 {
		checktest.WriteFile(t, src, filepath.Join("small", string(rune('a'+i%26)), "f"+string(rune('a'+i/26))), seed, 100+i*37)
		seed++
	}
	for i, size := range []int{300 << 10, 1 << 20, 3 << 20, 6 << 20} {
		checktest.WriteFile(t, src, filepath.Join("big", string(rune('a'+i))), seed, size)
		seed++
	}
	checktest.WriteFile(t, src, "same/1", 99, 200<<10)
	checktest.WriteFile(t, src, "same/2", 99, 200<<10)
	if err := os.WriteFile(filepath.Join(src, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sid := checktest.Backup(t, st, src)
	checktest.RestoreEqual(t, st, sid, src)
}

// countingRemote is a store across a network (restore.AcrossNetwork)
// that counts the reads of packs: every ranged read or stream of a pack
// is one request.
type countingRemote struct {
	store.Store
	packReads atomic.Int32
}

func (c *countingRemote) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if strings.HasPrefix(key, "data/") {
		c.packReads.Add(1)
	}
	return c.Store.GetRange(ctx, key, off, n)
}

// TestRestoreStreamsFile: from a store across a network, a file whose
// chunks lie in one pack is read in one request, however many buffers'
// worth they span and in whatever order the backup's concurrent blob
// workers packed them, and restored byte for byte.
func TestRestoreStreamsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counted := &countingRemote{Store: local.New(t.TempDir())}
	st := restore.AcrossNetwork(counted)
	opts := repo.InitOptions{Credentials: repo.Credentials{PlatformKey: checktest.Key},
		Chunker: repo.ChunkerParams{Min: 64 << 10, Avg: 256 << 10, Max: 1 << 20}, PackSize: 32 << 20}
	if _, _, err := repo.Init(ctx, st, opts); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	checktest.WriteFile(t, src, "twelve", 1, 12<<20) // more than a local read's buffer
	sid := checktest.Backup(t, st, src)

	before := counted.packReads.Load()
	checktest.RestoreEqual(t, st, sid, src)
	if got := counted.packReads.Load() - before; got != 2 {
		t.Errorf("%d reads of packs, want 2: the tree's and one of the file's chunks", got)
	}
}
