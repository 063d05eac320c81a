package restore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
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
