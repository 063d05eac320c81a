//go:build unix

package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3"
)

// needEnv returns the values of names, failing t when one is unset (the
// test servers are started by the scripts under scripts/).
func needEnv(t *testing.T, script string, names ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, n := range names {
		if m[n] = os.Getenv(n); m[n] == "" {
			if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
				t.Skipf("%s unset (CLOUDSTIC_TEST_NO_SERVERS=1)", n)
			}
			t.Fatalf(`%s unset: start the test server with eval "$(%s)"`, n, script)
		}
	}
	return m
}

func randHex(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// s3Repo makes a repository holding one backup under a new prefix of the
// test S3 server's bucket. It returns the binary's flags for it, the
// store opened on the prefix (to put objects through the S3 API, as an
// attacker with the bucket's credentials would) and the prefix's
// directory in the server's file system backend (to plant objects too
// large to upload in a test).
func s3Repo(t *testing.T) (flags []string, st store.Store, dir string) {
	t.Helper()
	e := needEnv(t, "scripts/s3-server.sh", "S3_TEST_ENDPOINT", "S3_TEST_BUCKET", "S3_TEST_ACCESS_KEY_ID",
		"S3_TEST_SECRET_ACCESS_KEY", "S3_TEST_DATA_DIR")
	prefix := "hostile-" + randHex(t)
	dir = filepath.Join(e["S3_TEST_DATA_DIR"], e["S3_TEST_BUCKET"], prefix)
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	region := os.Getenv("S3_TEST_REGION")
	if region == "" {
		region = "us-east-1"
	}
	st, err := s3.Open(context.Background(), s3.Config{Bucket: e["S3_TEST_BUCKET"], Prefix: prefix, Endpoint: e["S3_TEST_ENDPOINT"],
		Region: region, AccessKey: e["S3_TEST_ACCESS_KEY_ID"], SecretKey: e["S3_TEST_SECRET_ACCESS_KEY"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	flags = []string{"-store", "s3:" + e["S3_TEST_BUCKET"] + "/" + prefix, "-s3-endpoint", e["S3_TEST_ENDPOINT"],
		"-s3-region", region, "-s3-access-key", e["S3_TEST_ACCESS_KEY_ID"], "-s3-secret-key", e["S3_TEST_SECRET_ACCESS_KEY"],
		"-password", "right-pw"}
	initWithBackup(t, flags)
	return flags, st, dir
}

// initWithBackup initializes the repository of flags and backs up a small
// tree into it.
func initWithBackup(t *testing.T, flags []string) {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src}} {
		if res := run(t, append(args, flags...)...); res.code != 0 {
			t.Fatalf("%v", res)
		}
	}
}

func putObject(t *testing.T, st store.Store, key string, data []byte) {
	t.Helper()
	if _, err := st.Put(context.Background(), key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestOversizedObjectsS3 puts objects larger than their kind may be
// through the S3 API: a config and an exclusive lock of 1 MiB (64 KiB is
// the most either may be) and a snapshot one byte over its bound, and
// plants an 8 GiB config in the server's backend. Each run under the
// memory limit ends with a one-line error naming the object's size (the
// old code read the whole object: 8 GiB ran out of memory), break-lock
// removes the lock, and list skips the snapshot as damaged.
func TestOversizedObjectsS3(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, st store.Store, dir string)
		cmd   []string
		subs  []string
	}{
		{"config of 1 MiB", func(t *testing.T, st store.Store, _ string) {
			putObject(t, st, "config", bytes.Repeat([]byte{' '}, 1<<20))
		}, []string{"list"}, []string{"config: 1048576 bytes", "object too large"}},
		{"config of 8 GiB", func(t *testing.T, _ store.Store, dir string) {
			plantSparse(t, filepath.Join(dir, "config"), 8<<30)
		}, []string{"list"}, []string{"config: 8589934592 bytes", "object too large"}},
		{"exclusive lock of 1 MiB", func(t *testing.T, st store.Store, _ string) {
			putObject(t, st, "index/lock.exclusive", bytes.Repeat([]byte{'{'}, 1<<20))
		}, []string{"prune"}, []string{"lock.exclusive: 1048576 bytes", "object too large", "break-lock"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			flags, st, dir := s3Repo(t)
			mustSucceedLimited(t, append([]string{"list"}, flags...)...)
			tc.plant(t, st, dir)
			wantOneLine(t, runLimited(t, append(tc.cmd, flags...)...), 1, tc.subs...)
			if strings.Contains(tc.name, "lock") {
				if res := runLimited(t, append([]string{"break-lock"}, flags...)...); res.code != 0 {
					t.Fatalf("break-lock: %v", res)
				}
				mustSucceedLimited(t, append([]string{"prune"}, flags...)...)
			}
		})
	}
	t.Run("snapshot one byte over its bound", func(t *testing.T) {
		t.Parallel()
		flags, st, _ := s3Repo(t)
		const name = "5ab0000000000000000000000000000000000000000000000000000000000000"
		putObject(t, st, repo.SnapshotPrefix+name, make([]byte, repo.MaxSnapshotSize+1))
		wantSkipped(t, runLimited(t, append([]string{"list"}, flags...)...), name)
	})
}

// TestSpecialFilesSFTP plants, in the directory of a repository on the
// SFTP server (which runs on this machine), a config that is a link to
// /dev/zero and an exclusive lock that is a FIFO: list and backup end at
// once with a one-line error naming them.
func TestSpecialFilesSFTP(t *testing.T) {
	t.Parallel()
	e := needEnv(t, "scripts/sftp-server.sh", "SFTP_TEST_USER", "SFTP_TEST_PORT", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	tests := []struct {
		name  string
		key   string
		plant func(p string) error
		cmd   []string
		subs  []string
	}{
		{"config is a link to /dev/zero", "config", linkToDevZero, []string{"list"}, []string{"config is a symbolic link"}},
		{"exclusive lock is a FIFO", "index/lock.exclusive", fifo, []string{"prune"}, []string{"lock.exclusive is a FIFO", "break-lock"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(e["SFTP_TEST_PATH"], "hostile-"+randHex(t))
			t.Cleanup(func() {
				if err := os.RemoveAll(dir); err != nil {
					t.Error(err)
				}
			})
			flags := []string{"-store", "sftp://" + e["SFTP_TEST_USER"] + "@127.0.0.1:" + e["SFTP_TEST_PORT"] + dir,
				"-store-sftp-key", e["SFTP_TEST_KEY"], "-store-sftp-known-hosts", e["SFTP_TEST_KNOWN_HOSTS"], "-password", "right-pw"}
			initWithBackup(t, flags)
			replace(t, filepath.Join(dir, filepath.FromSlash(tc.key)), tc.plant)
			wantOneLine(t, runLimited(t, append(tc.cmd, flags...)...), 1, tc.subs...)
		})
	}
}
