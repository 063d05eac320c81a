package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// cliDeadline: a command still running after this has hung.
const cliDeadline = 5 * time.Minute

// repo is a repository on a cluster, driven through the binary.
type repo struct {
	t     *testing.T
	c     *cluster
	flags []string
}

func newRepo(t *testing.T, c *cluster, prefix string) *repo {
	r := &repo{t: t, c: c, flags: []string{"-store", "s3:" + c.srv.Bucket + "/" + prefix, "-s3-endpoint", c.srv.Endpoint,
		"-s3-region", c.srv.Region, "-s3-access-key", c.srv.AccessKey, "-s3-secret-key", c.srv.SecretKey, "-no-cache"}}
	r.must("init")
	return r
}

// start starts cmd with args on the repository.
func (r *repo) start(ctx context.Context, stdout, stderr *bytes.Buffer, cmd string, args ...string) *exec.Cmd {
	full := append(append([]string{cmd}, r.flags...), args...)
	c := exec.CommandContext(ctx, binary, full...)
	c.Env = append(os.Environ(), "CLOUDSTIC_PASSWORD=cluster")
	c.Stdout, c.Stderr = stdout, stderr
	if err := c.Start(); err != nil {
		r.t.Fatalf("starting %v: %v", full, err)
	}
	return c
}

// run runs cmd to the end and returns its exit code, stdout and stderr.
func (r *repo) run(cmd string, args ...string) (int, string, string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliDeadline)
	defer cancel()
	var out, errb bytes.Buffer
	c := r.start(ctx, &out, &errb, cmd, args...)
	return exitCode(r.t, cmd, c.Wait(), ctx.Err() != nil), out.String(), errb.String()
}

// must runs cmd and fails the test unless it exits 0.
func (r *repo) must(cmd string, args ...string) string {
	r.t.Helper()
	code, out, stderr := r.run(cmd, args...)
	if code != 0 {
		r.t.Fatalf("%s %v: exit %d: %s", cmd, args, code, stderr)
	}
	return out
}

// exitCode is the exit code behind cmd.Wait's err; a command that outlived
// its deadline (hung) fails the test.
func exitCode(t *testing.T, cmd string, err error, hung bool) int {
	t.Helper()
	if hung {
		t.Fatalf("%s hung past its %v deadline", cmd, cliDeadline)
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return 0
}

// backupID is the snapshot id a successful `backup -json` printed.
func backupID(t *testing.T, stdout string) string {
	t.Helper()
	var res struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.SnapshotID == "" {
		t.Fatalf("backup reported success without a snapshot id: %q (%v)", stdout, err)
	}
	return res.SnapshotID
}

// writeTree fills dir with n files of size random bytes.
func writeTree(t *testing.T, dir string, seed uint64, n, size int) {
	t.Helper()
	rnd := mrand.New(mrand.NewPCG(seed, 1))
	for i := range n {
		data := make([]byte, size)
		for j := 0; j < len(data); j += 8 {
			v := rnd.Uint64()
			for k := 0; k < 8 && j+k < len(data); k++ {
				data[j+k] = byte(v >> (8 * k))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// restoreAndCompare restores snapshot id and compares every file of src
// with its restored copy.
func (r *repo) restoreAndCompare(id, src string) {
	t := r.t
	t.Helper()
	out := filepath.Join(t.TempDir(), "restore")
	r.must("restore", id, "-output", out)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Errorf("snapshot %s: %v", id, err)
			continue
		}
		if sha256.Sum256(got) != sha256.Sum256(want) {
			t.Errorf("snapshot %s: %s restored as %d bytes differing from the %d backed up", id, e.Name(), len(got), len(want))
		}
	}
}

// countPacks is the number of objects under the repository's data/.
func (r *repo) countPacks(ctx context.Context, prefix string) (int, error) {
	out, err := r.c.srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: aws.String(r.c.srv.Bucket), Prefix: aws.String(prefix + "/data/")})
	if err != nil {
		return 0, err
	}
	return len(out.Contents), nil
}

// TestBackupSurvivesVolumeServerKill: a repository on the cluster holds a
// snapshot; a second backup (about 16 packs) runs, and once it has stored
// two packs volume servers are killed with SIGKILL (see outages). The
// backup must either complete or fail with one line saying why. With one
// node down the first snapshot still lists and restores (every object has
// a copy on another server). After the nodes are restarted, check
// -read-data is clean, every snapshot whose backup reported success is
// listed and restores byte for byte, and a backup that failed succeeds when
// run again.
func TestBackupSurvivesVolumeServerKill(t *testing.T) {
	t.Parallel()
	for _, o := range outages() {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			backupThroughOutage(t, o.kills)
		})
	}
}

func backupThroughOutage(t *testing.T, kills int) {
	c := startCluster(t)
	const prefix = "backup"
	r := newRepo(t, c, prefix)
	srcA, srcB := t.TempDir(), t.TempDir()
	writeTree(t, srcA, 1, 8, 256<<10)
	writeTree(t, srcB, 2, 32, 8<<20)
	idA := backupID(t, r.must("backup", "-source", "local:"+srcA, "-json"))

	before, err := r.countPacks(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliDeadline)
	defer cancel()
	var out, errb bytes.Buffer
	backup := r.start(ctx, &out, &errb, "backup", "-source", "local:"+srcB, "-json")
	exited := make(chan error, 1)
	go func() { exited <- backup.Wait() }()
	// Kill once two of the backup's packs are stored, while it writes more.
	var waitErr error
	done := false
	for !done {
		n, err := r.countPacks(ctx, prefix)
		if err != nil {
			t.Fatalf("listing packs: %v", err)
		}
		if n >= before+2 {
			break
		}
		select {
		case waitErr = <-exited:
			done = true
		case <-time.After(50 * time.Millisecond):
		}
	}
	if done {
		t.Fatalf("the backup ended (%v) before it had stored two packs: nothing was killed mid-backup\n%s", waitErr, errb.String())
	}
	c.killVolumes(kills)
	waitErr = <-exited
	code := exitCode(t, "backup", waitErr, ctx.Err() != nil)
	var idB string
	if code == 0 {
		idB = backupID(t, out.String())
		t.Logf("the backup completed with %d volume servers killed: snapshot %s", kills, idB)
	} else {
		if err := errOneLine(errb.String()); err != nil {
			t.Errorf("the backup failed (exit %d) without a clean one-line error: %v", code, err)
		}
		t.Logf("the backup failed cleanly (exit %d): %s", code, strings.TrimSpace(errb.String()))
	}

	if kills == 1 {
		// Reads are served by the other copy while the node is down.
		if list := r.must("list", "-json"); !strings.Contains(list, idA) {
			t.Errorf("with a node down, list does not show snapshot %s:\n%s", idA, list)
		}
		r.restoreAndCompare(idA, srcA)
	}

	c.restart()
	r.must("check", "-read-data")
	if idB == "" {
		idB = backupID(t, r.must("backup", "-source", "local:"+srcB, "-json"))
	}
	list := r.must("list", "-json")
	for _, id := range []string{idA, idB} {
		if !strings.Contains(list, id) {
			t.Errorf("snapshot %s is not listed:\n%s", id, list)
		}
	}
	r.restoreAndCompare(idA, srcA)
	r.restoreAndCompare(idB, srcB)
	r.must("check", "-read-data")
}
