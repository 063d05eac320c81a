package crash

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// faultSpec is the fault mix of TestStoreFaults: 5% errors, 5% short
// reads, 5% latency up to 5 ms, 1% lost replies to successful writes.
const faultSpec = "seed=%d,error=0.05,short=0.05,latency=0.05,latencyms=5,ackloss=0.01"

// TestStoreFaults runs backup, restore, check, forget and prune behind a
// store with injected faults. Each command exits 0, or exits 1 with one
// error line naming the command (see wantOneError); afterwards, without
// faults, check -read-data passes, every earlier snapshot restores byte for
// byte and a backup succeeds.
func TestStoreFaults(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 5))
	r := newRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	makeTree(t, src, rng, 25)
	r.backup(t, src)
	failed, lingering := 0, 0
	for round := range 12 {
		var args []string
		switch round % 4 {
		case 0:
			mutate(t, src, rng)
			args = []string{"backup", "-quiet", "-source", "local:" + src}
		case 1:
			args = []string{"restore", "latest", "-quiet", "-output", filepath.Join(t.TempDir(), "out")}
		case 2:
			args = []string{"check", "-read-data", "-quiet"}
		case 3:
			mutate(t, src, rng)
			r.backup(t, src)
			args = []string{"forget", "-quiet", "-keep-last", "2", "-group-by", "", "-prune", "-margin", "0", "-max-unused", "0"}
		}
		for attempt := range 3 {
			spec := fmt.Sprintf(faultSpec, rng.Int64())
			sources := map[string]manifest{src: scan(t, src)}
			before := ids(r.list(t))
			if args[0] == "forget" {
				before = newest(t, r.list(t), 2)
			}
			res := run(t, r.store, spec, args...)
			t.Logf("round %d.%d %s (%s): exit %d %s", round, attempt, args[0], spec, res.code, strings.TrimSpace(res.stderr))
			if res.code != 0 {
				failed++
				wantOneError(t, res)
			}
			if hasLocks(t, r.store) {
				// A failed release (an injected delete error, or a lost
				// reply) leaves a live lock; its holder has exited.
				lingering++
				r.breakLocks(t)
			}
			r.adopt(t, sources)
			r.verify(t, before)
			if res.code == 0 {
				break
			}
		}
	}
	r.backup(t, src)
	t.Logf("%d faulty runs failed cleanly; %d left a lock behind", failed, lingering)
}

// wantOneError requires exit 1 and one error line naming the command, last
// on stderr; lines before it may only be warnings and restore's list of
// files it could not restore.
func wantOneError(t *testing.T, res result) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	ok := !res.killed && res.code == 1 && strings.HasPrefix(lines[len(lines)-1], "cloudstic "+res.args[0]+": ")
	for _, l := range lines[:len(lines)-1] {
		ok = ok && (strings.HasPrefix(l, "warning: ") || strings.HasPrefix(l, "damaged: "))
	}
	if !ok {
		t.Fatalf("want exit 1 with one error line, got %v", res)
	}
}

// hasLocks reports whether any lock is left.
func hasLocks(t *testing.T, store string) bool {
	t.Helper()
	return strings.TrimSpace(mustRun(t, store, "locks").stdout) != "no locks"
}
