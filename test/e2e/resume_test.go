//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// packPut is a pack stored, as -debug logs it: its key and size.
var packPut = regexp.MustCompile(`store PUT(?:\(\S+\))? data/\S+ (\d+) bytes \S+: ok`)

// packBytes sums the sizes of the packs stored in a -debug log.
func packBytes(t *testing.T, log string) (n int, bytes int64) {
	t.Helper()
	for _, m := range packPut.FindAllStringSubmatch(log, -1) {
		b, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		n, bytes = n+1, bytes+b
	}
	return n, bytes
}

// TestInterruptedBackupResumes sends SIGINT (Ctrl-C) to a backup of 80 MiB
// of incompressible data (5 packs of 16 MiB) to a local and an S3 store,
// after 1 and after 3 packs are stored (as its -debug request log says):
// it exits 130 with its lock released. The re-run stores, by its own
// request log, only what was missing: none of what the interrupted run
// stored again (the two add up to the source, within 5 %, not more), and
// the repository checks clean with -read-data.
func TestInterruptedBackupResumes(t *testing.T) {
	t.Parallel()
	src, total := incompressibleSource(t, 1)
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}} {
		for _, after := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s after %d packs", kind.name, after), func(t *testing.T) {
				t.Parallel()
				r := newRepo(t, kind)
				log := interruptAfterPacks(t, r, src, after)
				n1, b1 := packBytes(t, log)
				var locks []any
				decodeJSON(t, mustRun(t, r.with("locks", "-json")...), &locks)
				if len(locks) != 0 || len(listJSON(t, r)) != 0 {
					t.Fatalf("after the interruption: locks %v, snapshots %v", locks, listJSON(t, r))
				}
				res := mustRun(t, r.with("backup", "-debug", "-json", "-source", "local:"+src)...)
				n2, b2 := packBytes(t, res.stderr)
				t.Logf("interrupted run stored %d packs (%d bytes), the re-run %d (%d bytes), of a %d-byte source", n1, b1, n2, b2, total)
				// Packs hold 8 to 16 MiB (a pack ends before the chunk that
				// would overfill it), so the first run stored at least 8 MiB
				// a pack: had the re-run stored that again, the sum would
				// exceed the source by as much.
				if n1 < after || b1+b2 > total*21/20 {
					t.Errorf("the re-run stored %d bytes after %d were stored, of a %d-byte source: want only what was missing", b2, b1, total)
				}
				mustRun(t, r.with("check", "-read-data")...)
			})
		}
	}
}

// interruptAfterPacks starts a backup of src with -debug, sends it SIGINT
// once its request log shows packs stored, requires exit code 130 after a
// clean stop, and returns its request log.
func interruptAfterPacks(t *testing.T, r repoArgs, src string, packs int) string {
	t.Helper()
	bp := startLogged(t, r.with("backup", "-debug", "-source", "local:"+src))
	c, exited, stderr := bp.cmd, bp.exited, bp.stderr
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for n, _ := packBytes(t, stderr()); n < packs; n, _ = packBytes(t, stderr()) {
		select {
		case <-exited:
			t.Fatalf("backup ended before %d packs were stored; stderr:\n%s", packs, stderr())
		case <-tick.C:
		}
	}
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited
	log := stderr()
	if code := c.ProcessState.ExitCode(); code != cli.ExitInterrupted || !strings.Contains(log, "interrupted; the lock was released") {
		t.Fatalf("interrupted backup exited %d, want %d after a clean stop; stderr:\n%s", code, cli.ExitInterrupted, log)
	}
	return log
}

// incompressibleSource writes a source directory of 5 files of 16 MiB of
// random bytes (seeds from seed on) and returns it and its size: 5 packs.
func incompressibleSource(t *testing.T, seed uint64) (dir string, size int64) {
	t.Helper()
	const files, fileSize = 5, 16 << 20
	dir = filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		name := filepath.Join(dir, fmt.Sprintf("f%d", i))
		if err := os.WriteFile(name, randomBytes(seed+uint64(i), fileSize), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files * fileSize
}
