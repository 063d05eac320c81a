//go:build unix

package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
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
		{"seaweedfs", seaweedfsStore},
		// b2: the B2 flavour (no conditional writes: the lock's
		// intents-only protocol, all versions of lock keys deleted)
		// against the local S3 servers, as no B2 account is reachable here.
		{"b2", b2Store},
		{"b2-seaweedfs", func(t *testing.T) []string { return b2Flags(seaweedfsStore(t)) }},
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

// s3Store is a fresh prefix on versitygw (scripts/s3-server.sh).
func s3Store(t *testing.T) []string { return s3StoreOn(t, s3test.Named(t, "versitygw")) }

// seaweedfsStore is a fresh prefix on the SeaweedFS cluster
// (scripts/seaweedfs-server.sh): objects on two of three volume servers.
func seaweedfsStore(t *testing.T) []string { return s3StoreOn(t, s3test.Named(t, "seaweedfs")) }

// s3StoreOn returns the flags of a fresh prefix of srv's bucket, removed at
// the end of the test.
func s3StoreOn(t *testing.T, srv s3test.Server) []string {
	prefix := randName(t, "e2e-")
	srv.RemoveAtCleanup(t, prefix)
	return []string{"-store", "s3:" + srv.Bucket + "/" + prefix, "-s3-endpoint", srv.Endpoint,
		"-s3-region", srv.Region, "-s3-access-key", srv.AccessKey, "-s3-secret-key", srv.SecretKey}
}

// b2Store is s3Store in the B2 flavour.
func b2Store(t *testing.T) []string { return b2Flags(s3Store(t)) }

// b2Flags turns the flags of an S3 store into those of the same bucket and
// prefix as a B2 store, with B2's own key flags.
func b2Flags(args []string) []string {
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
