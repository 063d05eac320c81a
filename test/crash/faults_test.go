//go:build unix

package crash

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/fault"
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
	report := filepath.Join(t.TempDir(), "fired")
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
			res := startEnv(t, append(env(r.store, spec), reportEnvVar+"="+report), args...).wait(t)
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
	fired := readFired(t, report)
	t.Logf("%d faulty runs failed cleanly; %d left a lock behind; faults fired: %+v", failed, lingering, fired)
	// Every kind must have fired, or the runs above proved nothing. Lost
	// replies (1% of Puts, a few dozen Puts in all) may not: they are
	// counted but not required.
	if fired.Errors == 0 || fired.ShortReads == 0 || fired.Latencies == 0 {
		t.Fatalf("faults did not fire: %+v", fired)
	}
}

// reportEnvVar is faultbin's report file variable (faultbin.ReportEnvVar;
// a main package cannot be imported).
const reportEnvVar = "CLOUDSTIC_TEST_FAULTS_REPORT"

// readFired sums the fault counts the runs appended to the report file,
// one JSON line per run.
func readFired(t *testing.T, path string) fault.Fired {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("fault report: %v", err)
	}
	var total fault.Fired
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var f fault.Fired
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("fault report line %q: %v", line, err)
		}
		total = total.Add(f)
	}
	return total
}

// wantOneError requires exit 1 (3 for a restore that restored all but the
// files it lists) and one error line naming the command, last on stderr;
// lines before it may only be warnings and restore's list of files it
// could not restore.
func wantOneError(t *testing.T, res result) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	prefix := "cloudstic " + res.args[0] + ": "
	code := res.code == 1 || (res.code == 3 && res.args[0] == "restore" && strings.Contains(res.stderr, "damaged: "))
	ok := !res.killed && code && strings.HasPrefix(lines[len(lines)-1], prefix)
	for _, l := range lines[:len(lines)-1] {
		if res.args[0] == "check" {
			// check's report is on stderr too, as Cloudstic's is: any
			// line but a second error line.
			ok = ok && !strings.HasPrefix(l, prefix)
			continue
		}
		ok = ok && (strings.HasPrefix(l, "warning: ") || strings.HasPrefix(l, "damaged: "))
	}
	if !ok {
		t.Fatalf("want exit 1 (or a restore's 3) with one error line, got %v", res)
	}
}

// hasLocks reports whether any lock is left.
func hasLocks(t *testing.T, store string) bool {
	t.Helper()
	return strings.TrimSpace(mustRun(t, store, "locks").stdout) != "no locks"
}
