//go:build unix

package crash

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// holdsLock reports whether the process pid holds a lock on store.
func holdsLock(t *testing.T, store string, pid int) bool {
	t.Helper()
	var locks []struct {
		Holder string `json:"holder"`
	}
	res := mustRun(t, store, "locks", "-json")
	if err := json.Unmarshal([]byte(res.stdout), &locks); err != nil {
		t.Fatalf("locks -json: %v\n%v", err, res)
	}
	for _, l := range locks {
		if strings.HasSuffix(l.Holder, fmt.Sprintf("(pid %d)", pid)) {
			return true
		}
	}
	return false
}

// interrupt starts args with injected latency (so the command is still
// working when the signal comes), waits until it holds its lock, and sends
// SIGINT. It reports false when the command ended before that.
func interrupt(t *testing.T, r *repoState, seed uint64, args ...string) (result, bool) {
	t.Helper()
	p := start(t, r.store, fmt.Sprintf("seed=%d,latency=1,latencyms=40", seed), args...)
	for {
		select {
		case <-p.done:
			return p.wait(t), false
		default:
		}
		if holdsLock(t, r.store, p.cmd.Process.Pid) {
			if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			res := p.wait(t)
			if res.code == 0 {
				return res, false // it finished just before the signal
			}
			if holdsLock(t, r.store, p.cmd.Process.Pid) {
				t.Fatalf("interrupted %s left its lock: %v", args[0], res)
			}
			return res, true
		}
	}
}

// TestInterrupt sends SIGINT (Ctrl-C) to backup, prune and restore while
// they hold their lock: each exits non-zero without a signal death,
// releases its lock, and leaves a repository that passes check -read-data,
// restores every snapshot byte for byte and takes the next backup.
func TestInterrupt(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 99))
	r := newRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	makeTree(t, src, rng, 30)
	r.backup(t, src)
	r.backup(t, src)
	tests := []struct {
		name    string
		prepare func() []string
	}{
		{"backup", func() []string {
			mutate(t, src, rng)
			return []string{"backup", "-quiet", "-source", "local:" + src}
		}},
		{"prune", func() []string {
			mutate(t, src, rng)
			r.backup(t, src)
			mustRun(t, r.store, "forget", "-keep-last", "2", "-group-by", "")
			return []string{"prune", "-quiet", "-margin", "0", "-max-unused", "0"}
		}},
		{"restore", func() []string {
			return []string{"restore", "latest", "-quiet", "-output", filepath.Join(t.TempDir(), "out")}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for attempt := uint64(0); ; attempt++ {
				if attempt == 5 {
					t.Fatalf("%s always finished before it could be interrupted", tc.name)
				}
				args := tc.prepare()
				sources := map[string]manifest{src: scan(t, src)}
				before := ids(r.list(t))
				res, ok := interrupt(t, r, seed+attempt, args...)
				if res.killed || res.code < 0 {
					t.Fatalf("interrupted %s died of a signal: %v", tc.name, res)
				}
				r.adopt(t, sources)
				r.verify(t, before)
				r.backup(t, src)
				if ok {
					t.Logf("interrupted %s: exit %d, %s", tc.name, res.code, strings.TrimSpace(res.stderr))
					break
				}
			}
		})
	}
}
