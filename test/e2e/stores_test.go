//go:build unix

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storeKind is one kind of repository store the suite runs against.
type storeKind struct {
	name string
	// open returns the global flags naming a fresh, empty repository
	// location of this kind (and arranges its removal).
	open func(t *testing.T) []string
}

// storeKinds are the stores of the core round-trip table.
func storeKinds() []storeKind {
	return []storeKind{
		{"local", localStore},
		{"s3", s3Store},
		// b2: the B2 flavour (no conditional writes: the lock's
		// write-settle-verify fallback, all versions of lock keys deleted)
		// against the local S3 server, as no B2 account is reachable here.
		{"b2", b2Store},
		{"sftp", sftpStore},
	}
}

// randName returns prefix plus 12 random hex digits.
func randName(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

func localStore(t *testing.T) []string {
	return []string{"-store", "local:" + filepath.Join(t.TempDir(), "repo")}
}

// needEnv returns the named variables, failing the test (skipping it when
// CLOUDSTIC_TEST_NO_SERVERS=1) when one is missing.
func needEnv(t *testing.T, script string, names ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	var missing []string
	for _, n := range names {
		m[n] = os.Getenv(n)
		if m[n] == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skipf("no test server (%s unset; CLOUDSTIC_TEST_NO_SERVERS=1)", strings.Join(missing, ", "))
		}
		t.Fatalf(`test server not configured (%s unset): start it with: eval "$(%s)"`, strings.Join(missing, ", "), script)
	}
	return m
}

func s3Store(t *testing.T) []string {
	e := needEnv(t, "scripts/s3-server.sh", "S3_TEST_ENDPOINT", "S3_TEST_BUCKET", "S3_TEST_ACCESS_KEY_ID", "S3_TEST_SECRET_ACCESS_KEY")
	prefix := randName(t, "e2e-")
	if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
		// versitygw's posix backend keeps objects as files under
		// DATA/BUCKET/KEY: remove our prefix when done.
		t.Cleanup(func() {
			if err := os.RemoveAll(filepath.Join(data, e["S3_TEST_BUCKET"], prefix)); err != nil {
				t.Error(err)
			}
		})
	}
	region := os.Getenv("S3_TEST_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return []string{"-store", "s3:" + e["S3_TEST_BUCKET"] + "/" + prefix, "-s3-endpoint", e["S3_TEST_ENDPOINT"],
		"-s3-region", region, "-s3-access-key", e["S3_TEST_ACCESS_KEY_ID"], "-s3-secret-key", e["S3_TEST_SECRET_ACCESS_KEY"]}
}

func b2Store(t *testing.T) []string {
	args := s3Store(t)
	// s3Store's flags, with the bucket under b2: and B2's own key flags.
	flags := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		flags[args[i]] = args[i+1]
	}
	return []string{"-store", "b2:" + strings.TrimPrefix(flags["-store"], "s3:"), "-s3-endpoint", flags["-s3-endpoint"],
		"-b2-region", flags["-s3-region"], "-b2-key-id", flags["-s3-access-key"], "-b2-app-key", flags["-s3-secret-key"]}
}

func sftpStore(t *testing.T) []string {
	e := needEnv(t, "scripts/sftp-server.sh", "SFTP_TEST_USER", "SFTP_TEST_PORT", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	dir := filepath.Join(e["SFTP_TEST_PATH"], randName(t, "e2e-"))
	// The server runs on this machine: clean up directly.
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	// The path of an sftp:// URL is absolute on the server, as Cloudstic's
	// guide writes it.
	url := "sftp://" + e["SFTP_TEST_USER"] + "@127.0.0.1:" + e["SFTP_TEST_PORT"] + dir
	return []string{"-store", url, "-store-sftp-key", e["SFTP_TEST_KEY"], "-store-sftp-known-hosts", e["SFTP_TEST_KNOWN_HOSTS"]}
}

// repoArgs are the global flags of one test repository.
type repoArgs []string

// with returns cmd, the repository flags, then args.
func (r repoArgs) with(cmd string, args ...string) []string {
	out := append([]string{cmd}, r...)
	return append(out, args...)
}

// newRepo initializes a password-protected repository on kind and returns
// its flags (password included).
func newRepo(t *testing.T, kind storeKind) repoArgs {
	t.Helper()
	r := repoArgs(append(kind.open(t), "-password", "correct horse"))
	mustRun(t, r.with("init")...)
	return r
}

// newLocalRepo is newRepo on the local store.
func newLocalRepo(t *testing.T) repoArgs {
	t.Helper()
	return newRepo(t, storeKind{"local", localStore})
}
