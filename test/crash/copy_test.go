//go:build unix

package crash

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCopyKilled SIGKILLs copy processes just before a chosen write of
// theirs (the fault hook's killat: the destination's lock, packs, index
// files, the first snapshot), then runs the same copy again without
// faults: each source snapshot is in the destination exactly once, the
// destination checks clean with -read-data, and every copy restores byte
// for byte.
func TestCopyKilled(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(testSeed(t), 7))
	src := newRepo(t)
	tree := filepath.Join(t.TempDir(), "src")
	makeTree(t, tree, rng, 30)
	src.backup(t, tree)
	mutate(t, tree, rng)
	src.backup(t, tree)
	args := []string{"copy", "-from-store", "local:" + src.store, "-from-encryption-key", key}
	afterFirst := false
	// A tree of 1-3 MB fills one data pack, so the destination's writes
	// are: its lock, a data and a tree pack, an index file, the first
	// snapshot, then the second's: killat=6 falls after the first snapshot.
	for _, killAt := range []int{2, 5, 6} {
		dst := newRepo(t)
		res := run(t, dst.store, "killat="+strconv.Itoa(killAt), args...)
		if !res.killed {
			t.Fatalf("killat=%d: the copy was not killed: %v", killAt, res)
		}
		before := len(dst.list(t))
		afterFirst = afterFirst || before == 1
		// The killed process's shared locks block no other copy.
		mustRun(t, dst.store, args...)
		listed := dst.list(t)
		originals := map[string]bool{}
		for _, s := range listed {
			orig := original(t, dst, s.ID)
			if originals[orig] {
				t.Fatalf("killat=%d: original %s copied twice", killAt, orig[:8])
			}
			originals[orig] = true
			want, ok := src.snaps[orig]
			if !ok {
				t.Fatalf("killat=%d: snapshot %s copies %s, not a source snapshot", killAt, s.ID[:8], orig[:8])
			}
			dst.snaps[s.ID] = want
		}
		if len(listed) != len(src.snaps) {
			t.Fatalf("killat=%d: %d snapshots copied, want %d", killAt, len(listed), len(src.snaps))
		}
		dst.verify(t, ids(listed))
		t.Logf("killat=%d: %d snapshots stored before the kill", killAt, before)
	}
	if !afterFirst {
		t.Error("no kill fell after the first snapshot was stored")
	}
}

// original returns the original id recorded in snapshot id of r.
func original(t *testing.T, r *repoState, id string) string {
	t.Helper()
	var out struct {
		Snapshot struct {
			Original string `json:"original"`
		} `json:"snapshot"`
	}
	res := mustRun(t, r.store, "cat", "snapshot", id)
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || len(out.Snapshot.Original) != 64 {
		t.Fatalf("cat snapshot %s: %v\n%v", id, err, res)
	}
	return out.Snapshot.Original
}
