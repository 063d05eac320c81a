//go:build unix

package e2e

import (
	"regexp"
	"testing"
	"time"
)

// indexPut is an index file stored, as -debug logs it: a checkpoint.
var indexPut = regexp.MustCompile(`store PUT(?:\(\S+\))? index/packs/\S+ \d+ bytes \S+: ok`)

// TestKilledBackupResumes SIGKILLs (kill -9: no clean stop, nothing more
// reaches the store) a backup of 80 MiB of incompressible data to a local
// and an S3 store once its request log shows a checkpoint, an index file
// written while it runs (-checkpoint-interval 1ns: one after every pack).
// The re-run reuses what that checkpoint indexed: it stores at least one
// pack's worth (8 MiB) less than the source, where a run that reused
// nothing stores all of it, and the repository checks clean with
// -read-data. The killed run's lock stays behind until its lease runs out;
// a backup is a shared holder and runs beside it.
func TestKilledBackupResumes(t *testing.T) {
	t.Parallel()
	src, total := incompressibleSource(t, 11)
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			log := killAfterCheckpoint(t, r, src)
			n1, b1 := packBytes(t, log)
			res := mustRun(t, r.with("backup", "-debug", "-json", "-source", "local:"+src)...)
			n2, b2 := packBytes(t, res.stderr)
			t.Logf("killed run stored %d packs (%d bytes) before its kill, the re-run %d (%d bytes), of a %d-byte source", n1, b1, n2, b2, total)
			if b2 > total-8<<20 {
				t.Errorf("the re-run stored %d bytes of a %d-byte source after a checkpoint: want at least a pack (8 MiB) less", b2, total)
			}
			if got := len(listJSON(t, r)); got != 1 {
				t.Errorf("%d snapshots after the re-run, want 1", got)
			}
			mustRun(t, r.with("check", "-read-data")...)
		})
	}
}

// killAfterCheckpoint starts a backup of src with -debug and a checkpoint
// after every pack, SIGKILLs it once its request log shows an index file
// stored, and returns its request log.
func killAfterCheckpoint(t *testing.T, r repoArgs, src string) string {
	t.Helper()
	bp := startLogged(t, r.with("backup", "-debug", "-checkpoint-interval", "1ns", "-source", "local:"+src))
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !indexPut.MatchString(bp.stderr()) {
		select {
		case <-bp.exited:
			t.Fatalf("backup ended before a checkpoint was stored; stderr:\n%s", bp.stderr())
		case <-tick.C:
		}
	}
	if err := bp.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-bp.exited
	if bp.cmd.ProcessState.Success() {
		t.Fatalf("the killed backup exited 0; stderr:\n%s", bp.stderr())
	}
	return bp.stderr()
}
