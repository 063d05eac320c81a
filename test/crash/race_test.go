//go:build unix

package crash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBackupPruneRace (issue #3): a repository with several snapshots
// forgets most of them, then backups (of new data and of trees identical
// to the forgotten snapshots, so dedup points at blobs prune wants to
// delete) and prunes run concurrently as separate processes, for several
// rounds. Each prune runs or fails with the lock error (one of three gives
// up at once, two wait; one uses the default margin); each backup (which waits for the lock) succeeds. Afterwards check -read-data passes and
// every snapshot restores byte for byte against the tree it was made from.
func TestBackupPruneRace(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	r := newRepo(t)
	base := t.TempDir()
	var old []string // trees of the forgotten snapshots
	for i := range 5 {
		src := filepath.Join(base, fmt.Sprintf("old%d", i))
		makeTree(t, src, rng, 12)
		r.backup(t, src)
		old = append(old, src)
	}
	mustRun(t, r.store, "forget", "-keep-last", "1", "-group-by", "")
	r.verify(t, nil)
	for round := range 4 {
		var jobs [][]string
		for i := range 3 {
			// A copy of a forgotten tree at a new path, or new data.
			src := filepath.Join(base, fmt.Sprintf("r%d-b%d", round, i))
			if i < 2 {
				copyTree(t, old[rng.IntN(len(old))], src)
			} else {
				makeTree(t, src, rng, 10)
			}
			jobs = append(jobs, []string{"backup", "-json", "-lock-wait", "2m", "-source", "local:" + src})
			// One prune gives up at once, the others wait for the lock.
			// One runs with the default margin, which spares only fresh
			// unindexed packs: the packs the backups index are judged
			// by use alone, however new.
			prune := []string{"prune", "-quiet", "-max-unused", "0", "-lock-wait", "2m"}
			switch i {
			case 0:
				prune = []string{"prune", "-quiet", "-margin", "0", "-max-unused", "0", "-lock-wait", "0s"}
			case 2:
				prune = append(prune, "-margin", "0")
			}
			jobs = append(jobs, prune)
		}
		results := make([]result, len(jobs))
		var wg sync.WaitGroup
		for i, args := range jobs {
			wg.Go(func() { results[i] = run(t, r.store, "", args...) })
		}
		wg.Wait()
		ran, sources := 0, map[string]manifest{}
		for i, res := range results {
			switch {
			case jobs[i][0] == "backup" && res.code == 0:
				src := strings.TrimPrefix(jobs[i][len(jobs[i])-1], "local:")
				sources[src] = scan(t, src)
			case jobs[i][0] == "prune" && res.code == 0:
				ran++
			case jobs[i][0] == "prune" && res.code == 1 && strings.Contains(res.stderr, "repository is") &&
				(strings.Contains(res.stderr, "locked") || strings.Contains(res.stderr, "queued for a")):
				// The prune that does not wait found the lock held, or
				// a waiting acquirer queued before it (writer preference).
			default:
				t.Fatalf("round %d: %v", round, res)
			}
		}
		r.adopt(t, sources)
		t.Logf("round %d: %d of 3 prunes ran (two wait for the lock), the others found it locked", round, ran)
		r.verify(t, nil)
		mustRun(t, r.store, "forget", "-keep-last", "2", "-group-by", "")
		r.verify(t, nil)
	}
}

// copyTree copies the regular files and directories below src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}
