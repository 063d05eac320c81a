//go:build unix

package crash

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// killRun runs args (a command and its flags) on r and SIGKILLs it: in
// even rounds through the fault hook just before or just after a chosen
// store write or delete, in odd rounds after a random delay. A trial run
// on a copy of the repository counts the writes and times the command. It
// reports whether the run was killed.
func (r *repoState) killRun(t *testing.T, rng *rand.Rand, round int, args ...string) bool {
	t.Helper()
	begin := time.Now()
	trial := mustRun(t, r.copyRepo(t), append([]string{args[0], "-debug"}, args[1:]...)...)
	took := time.Since(begin)
	writes := strings.Count(trial.stderr, "store PUT") + strings.Count(trial.stderr, "store DELETE")
	if writes == 0 {
		t.Fatalf("trial run made no store writes:\n%v", trial)
	}
	if round%2 == 0 {
		at, mid := 1+rng.IntN(writes), rng.IntN(2) == 1
		res := run(t, r.store, fmt.Sprintf("killat=%d,killmidput=%t", at, mid), args...)
		t.Logf("round %d: %s killed at write %d of %d (after it: %v)", round, args[0], at, writes, mid)
		if !res.killed {
			t.Fatalf("not killed at write %d of %d: %v", at, writes, res)
		}
		return true
	}
	d := time.Duration(rng.Int64N(int64(took)))
	res := start(t, r.store, "", args...).killAfter(t, d)
	t.Logf("round %d: %s killed after %v (trial took %v): killed: %v", round, args[0], d, took, res.killed)
	if !res.killed && res.code != 0 {
		t.Fatalf("unkilled run failed: %v", res)
	}
	return res.killed
}

// killScenario is one command killed over and over.
type killScenario struct {
	name  string
	kills int // how many kills it must reach
	// round prepares the repository, returns the command to kill and the
	// snapshots that must survive it.
	round func(t *testing.T, r *repoState, rng *rand.Rand, src string) (args, keep []string)
}

// TestKill kills backup (initial and incremental), forget -prune and
// prune with SIGKILL, at least 50 times in all, and after each kill
// requires check -read-data to pass, every snapshot that must survive to
// restore byte for byte, and the next backup to succeed. The killed
// process's lock is removed with break-lock: its holder is known dead and
// the CLI's lease is fixed at one minute.
func TestKill(t *testing.T) {
	seed := testSeed(t)
	scenarios := []killScenario{
		{"backup", 20, roundBackup},
		{"forget-prune", 16, roundForgetPrune},
		{"prune", 16, roundPrune},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			r := newRepo(t)
			src := filepath.Join(t.TempDir(), "src0")
			makeTree(t, src, rng, 30)
			r.backup(t, src)
			kills := 0
			for round := 0; kills < sc.kills; round++ {
				if round >= 3*sc.kills {
					t.Fatalf("only %d kills in %d rounds", kills, round)
				}
				args, keep := sc.round(t, r, rng, src)
				if strings.HasPrefix(args[len(args)-1], "local:") {
					src = strings.TrimPrefix(args[len(args)-1], "local:")
				}
				sources := map[string]manifest{src: scan(t, src)}
				if r.killRun(t, rng, round, args...) {
					kills++
				}
				r.breakLocks(t)
				r.adopt(t, sources)
				r.verify(t, keep)
				r.backup(t, src)
			}
			t.Logf("%d kills", kills)
		})
	}
}

// roundBackup changes the source (every fifth round a new source: an
// initial backup) and kills its backup; every snapshot must survive.
func roundBackup(t *testing.T, r *repoState, rng *rand.Rand, src string) ([]string, []string) {
	if len(r.snaps) > 5 {
		mustRun(t, r.store, "forget", "-keep-last", "3", "-group-by", "")
		r.verify(t, nil)
	}
	if rng.IntN(5) == 0 {
		src = filepath.Join(filepath.Dir(src), fmt.Sprintf("src%d", rng.Uint32()))
		makeTree(t, src, rng, 20+rng.IntN(20))
	} else {
		mutate(t, src, rng)
	}
	return []string{"backup", "-quiet", "-source", "local:" + src}, ids(r.list(t))
}

// roundForgetPrune adds two snapshots and kills forget -keep-last 3
// -prune; the three newest must survive.
func roundForgetPrune(t *testing.T, r *repoState, rng *rand.Rand, src string) ([]string, []string) {
	for range 2 {
		mutate(t, src, rng)
		r.backup(t, src)
	}
	return []string{"forget", "-quiet", "-keep-last", "3", "-group-by", "", "-prune", "-margin", "0", "-max-unused", "0"},
		newest(t, r.list(t), 3)
}

// roundPrune adds two snapshots, forgets all but the newest three, and
// kills prune; every remaining snapshot must survive.
func roundPrune(t *testing.T, r *repoState, rng *rand.Rand, src string) ([]string, []string) {
	for range 2 {
		mutate(t, src, rng)
		r.backup(t, src)
	}
	mustRun(t, r.store, "forget", "-keep-last", "3", "-group-by", "")
	return []string{"prune", "-quiet", "-margin", "0", "-max-unused", "0"}, ids(r.list(t))
}

// newest returns the ids of the n newest snapshots.
func newest(t *testing.T, snaps []snap, n int) []string {
	t.Helper()
	slices.SortFunc(snaps, func(a, b snap) int { return snapTime(t, a).Compare(snapTime(t, b)) })
	return ids(snaps[max(0, len(snaps)-n):])
}

func snapTime(t *testing.T, s snap) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s.Created)
	if err != nil {
		t.Fatalf("snapshot %s: time %q: %v", s.ID, s.Created, err)
	}
	return tm
}
