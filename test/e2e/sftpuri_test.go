//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// sftpBase is "sftp://USER@127.0.0.1:PORT" of the test server and the
// flags that log in to it. The server's login directory is SFTP_TEST_PATH.
func sftpBase(t *testing.T) (base, loginDir string, auth []string) {
	t.Helper()
	e := needEnv(t, "scripts/sftp-server.sh", "SFTP_TEST_USER", "SFTP_TEST_PORT", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	return "sftp://" + e["SFTP_TEST_USER"] + "@127.0.0.1:" + e["SFTP_TEST_PORT"], e["SFTP_TEST_PATH"],
		[]string{"-store-sftp-key", e["SFTP_TEST_KEY"], "-store-sftp-known-hosts", e["SFTP_TEST_KNOWN_HOSTS"]}
}

// TestSFTPStoreURIPaths: the path of an sftp:// store URL is absolute on
// the server, "/~/" puts it under the login directory, and a URL that
// found its repository under the login directory before (when paths were
// read that way) fails with one line naming the URL to use.
func TestSFTPStoreURIPaths(t *testing.T) {
	base, loginDir, auth := sftpBase(t)
	name := randName(t, "uri-")
	abs, home := filepath.Join(loginDir, name+"-abs"), filepath.Join(loginDir, name+"-home")
	t.Cleanup(func() {
		for _, d := range []string{abs, home} {
			if err := os.RemoveAll(d); err != nil {
				t.Error(err)
			}
		}
	})
	store := func(uri string, args ...string) []string {
		return append(append([]string{args[0], "-store", uri, "-password", "pw"}, auth...), args[1:]...)
	}
	tests := []struct {
		name, uri, dir string
	}{
		{"absolute", base + abs, abs},
		{"login directory", base + "/~/" + name + "-home", home},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustRun(t, store(tt.uri, "init")...)
			if _, err := os.Stat(filepath.Join(tt.dir, "config")); err != nil {
				t.Fatalf("init of %s made no repository in %s: %v", tt.uri, tt.dir, err)
			}
			mustRun(t, store(tt.uri, "list")...)
		})
	}
	t.Run("old reading", func(t *testing.T) {
		// Read as absolute, /NAME-home is missing; read as before, it is
		// the repository under the login directory.
		res := run(t, store(base+"/"+name+"-home", "list")...)
		if res.code == 0 {
			t.Fatalf("want a failure, got %v", res)
		}
		wantOneLineError(t, res, "repository not initialized", base+"/~/"+name+"-home")
		res = run(t, store(base+"/"+name+"-none", "list")...)
		wantOneLineError(t, res, "run 'cloudstic init'")
	})
}
