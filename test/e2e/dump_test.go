//go:build unix

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDump streams a file and whole trees out of a snapshot on every kind
// of store: the file byte for byte, the tar extracted by GNU tar and the
// zip by unzip, compared with the source.
func TestDump(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}, {"sftp", sftpStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := filepath.Join(t.TempDir(), "src")
			info := makeTree(t, src, treeOpts{big: kind.name == "local", seed: 11})
			sid := backupJSON(t, r, src).SnapshotID

			// A path from the snapshot root, with or without "/", or an
			// absolute path under the backed-up directory.
			for _, f := range []struct{ arg, rel string }{
				{"comp64k", "comp64k"}, {"/a/b/sibling", "a/b/sibling"}, {src + "/one", "one"}, {"empty", "empty"},
			} {
				got := mustRun(t, r.with("dump", sid[:8], f.arg)...).stdout
				want, err := os.ReadFile(filepath.Join(src, f.rel))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal([]byte(got), want) {
					t.Errorf("dump %s: %d bytes, want %d", f.arg, len(got), len(want))
				}
			}
			if kind.name == "local" {
				got := mustRun(t, r.with("dump", "latest", "big/rand20m")...).stdout
				want, err := os.ReadFile(filepath.Join(src, "big/rand20m"))
				if err != nil || !bytes.Equal([]byte(got), want) {
					t.Errorf("dump of the 20 MiB file: %d bytes, want %d (%v)", len(got), len(want), err)
				}
			}

			t.Run("tar", func(t *testing.T) {
				dst := t.TempDir()
				untar := exec.Command("tar", "-x", "-p", "--xattrs", "--xattrs-include=user.*", "--same-owner", "-C", dst)
				dump := runOpts{}.cmd(r.with("dump", sid, "/"))
				pipe, err := dump.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				untar.Stdin = pipe
				var dumpErr, tarErr bytes.Buffer
				dump.Stderr, untar.Stderr = &dumpErr, &tarErr
				if err := dump.Start(); err != nil {
					t.Fatal(err)
				}
				if err := untar.Run(); err != nil {
					t.Fatalf("tar -x: %v: %s", err, tarErr.String())
				}
				if err := dump.Wait(); err != nil {
					t.Fatalf("dump: %v: %s", err, dumpErr.String())
				}
				compareTrees(t, src, dst, cmpOpts(info))
			})
			t.Run("zip of a subdirectory", func(t *testing.T) {
				dir := t.TempDir()
				zipFile := filepath.Join(dir, "a.zip")
				if err := os.WriteFile(zipFile, []byte(mustRun(t, r.with("dump", sid, "a", "-archive", "zip")...).stdout), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command("unzip", "-q", zipFile, "-d", filepath.Join(dir, "x")).CombinedOutput()
				if err != nil {
					t.Fatalf("unzip: %v: %s", err, out)
				}
				for _, rel := range []string{"a/b/c/d/deep.txt", "a/b/sibling", "a/hard2"} {
					got, err1 := os.ReadFile(filepath.Join(dir, "x", rel))
					want, err2 := os.ReadFile(filepath.Join(src, rel))
					if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
						t.Errorf("%s: %v %v, equal %v", rel, err1, err2, bytes.Equal(got, want))
					}
				}
			})
			wantOneLineError(t, run(t, r.with("dump", sid, "no/such/file")...), "no/such/file")
			wantOneLineError(t, run(t, r.with("dump", sid, "link-rel")...), "symlink", "-archive")
			wantOneLineError(t, run(t, r.with("dump", sid)...), "dump SNAPSHOT")
			wantOneLineError(t, run(t, r.with("dump", sid, "a", "-archive", "rar")...), "rar")
		})
	}
}
