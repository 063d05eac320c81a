//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyOut is the -json document of copy.
type copyOut struct {
	Copied []struct {
		SourceID string `json:"source_id"`
		NewID    string `json:"new_id"`
		Original string `json:"original"`
		Path     string `json:"path"`
	} `json:"copied"`
	Skipped    []string `json:"skipped"`
	Rechunked  bool     `json:"rechunked"`
	BlobsRead  int64    `json:"blobs_read"`
	BlobsAdded int64    `json:"blobs_added"`
	DryRun     bool     `json:"dry_run"`
}

// fromArgs turns a repository's global flags into copy's -from-* flags;
// its password goes through CLOUDSTIC_FROM_PASSWORD (fromPassword).
func fromArgs(r repoArgs) []string {
	var out []string
	for i := 0; i < len(r); i++ {
		if r[i] == "-password" {
			i++
			continue
		}
		if strings.HasPrefix(r[i], "-") {
			out = append(out, "-from-"+r[i][1:])
		} else {
			out = append(out, r[i])
		}
	}
	return out
}

// fromPassword is the environment giving the source's password (every
// repository of newRepo has this one; keys differ all the same).
var fromPassword = runOpts{env: []string{"CLOUDSTIC_FROM_PASSWORD=correct horse"}}

// copyJSON copies every snapshot of from into to and returns the document.
func copyJSON(t *testing.T, from, to repoArgs, args ...string) copyOut {
	t.Helper()
	all := append(to.with("copy", "-json"), fromArgs(from)...)
	res := runWith(t, fromPassword, append(all, args...)...)
	if res.code != 0 {
		t.Fatalf("copy failed: %v", res)
	}
	var out copyOut
	decodeJSON(t, res, &out)
	return out
}

// restoreAllEqual restores every snapshot of r and compares it with the
// tree its path names, and checks r with -read-data.
func restoreAllEqual(t *testing.T, r repoArgs, trees map[string]string) {
	t.Helper()
	list := listJSON(t, r)
	if len(list) != len(trees) {
		t.Fatalf("%d snapshots, want %d: %+v", len(list), len(trees), list)
	}
	for _, s := range list {
		src, ok := trees[s.Path]
		if !ok {
			t.Fatalf("snapshot %s of unknown path %s", s.ID[:8], s.Path)
		}
		dst := filepath.Join(t.TempDir(), "out")
		mustRun(t, r.with("restore", s.ID, "-output", dst)...)
		compareTrees(t, src, dst, cmpOpts{})
	}
	mustRun(t, r.with("check", "-read-data")...)
}

// setChunker rewrites the chunker sizes of a fresh local repository's
// config (no command sets them; a repository created by another program
// may have any). The config's MAC goes too, as in a config written before
// configs had one: no command can sign the edit without the key.
func setChunker(t *testing.T, r repoArgs, min, avg, max int) {
	t.Helper()
	path := filepath.Join(strings.TrimPrefix(r[1], "local:"), "config")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["chunker"] = map[string]int{"min": min, "avg": avg, "max": max}
	delete(cfg, "mac")
	if data, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCopyAcrossStores copies two snapshots of real trees from the local
// store to the S3 server, from there to the SFTP server and back to the
// local store, and into a local repository with other chunker sizes: each
// copy restores byte for byte and checks clean; a second run and the copy
// back skip everything (counted); the re-chunked copy says so.
func TestCopyAcrossStores(t *testing.T) {
	t.Parallel()
	local := newRepo(t, storeKind{"local", localStore})
	s3 := newRepo(t, storeKind{"s3", s3Store})
	sftp := newRepo(t, storeKind{"sftp", sftpStore})
	small := smallTree(t, 21)
	big := smallTree(t, 22)
	writeRandom(t, filepath.Join(big, "three-mib"), 3<<20, 22)
	trees := map[string]string{small: small, big: big}
	backupJSON(t, local, small, "-tag", "monthly")
	backupJSON(t, local, big)

	dry := copyJSON(t, local, s3, "-dry-run")
	if !dry.DryRun || len(dry.Copied) != 2 || dry.Copied[0].NewID != "" || len(listJSON(t, s3)) != 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	first := copyJSON(t, local, s3)
	if len(first.Copied) != 2 || len(first.Skipped) != 0 || first.Rechunked || first.BlobsAdded == 0 {
		t.Fatalf("local -> s3: %+v", first)
	}
	for _, c := range first.Copied {
		if c.Original != c.SourceID || catOriginal(t, s3, c.NewID) != c.SourceID {
			t.Errorf("copy %+v does not record its original", c)
		}
	}
	restoreAllEqual(t, s3, trees)
	again := copyJSON(t, local, s3)
	if len(again.Copied) != 0 || len(again.Skipped) != 2 || again.BlobsRead != 0 || again.BlobsAdded != 0 {
		t.Fatalf("second local -> s3: %+v", again)
	}

	if out := copyJSON(t, s3, sftp, "-tag", "monthly"); len(out.Copied) != 1 || out.Copied[0].Path != small {
		t.Fatalf("s3 -> sftp -tag monthly: %+v", out)
	}
	if out := copyJSON(t, s3, sftp); len(out.Copied) != 1 || len(out.Skipped) != 1 {
		t.Fatalf("s3 -> sftp: %+v", out)
	}
	restoreAllEqual(t, sftp, trees)
	if back := copyJSON(t, sftp, local); len(back.Copied) != 0 || len(back.Skipped) != 2 {
		t.Fatalf("sftp -> local (back): %+v", back)
	}
	if n := len(listJSON(t, local)); n != 2 {
		t.Fatalf("the copy back added snapshots: %d", n)
	}

	other := newRepo(t, storeKind{"local", localStore})
	setChunker(t, other, 64<<10, 128<<10, 512<<10)
	re := copyJSON(t, sftp, other)
	if !re.Rechunked || len(re.Copied) != 2 {
		t.Fatalf("sftp -> other chunker: %+v", re)
	}
	restoreAllEqual(t, other, trees)
}

// writeRandom writes n pseudo-random bytes from seed to path.
func writeRandom(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	data := make([]byte, n)
	x := seed | 1
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCopyErrors: a missing source, a wrong source password, copying a
// repository into itself and an unknown snapshot fail with one line and
// write nothing.
func TestCopyErrors(t *testing.T) {
	t.Parallel()
	src := newLocalRepo(t)
	dst := newLocalRepo(t)
	backupJSON(t, src, smallTree(t, 23))
	cases := []struct {
		opts runOpts
		args []string
		code int
		subs []string
	}{
		{runOpts{}, dst.with("copy"), 2, []string{"-from-store"}},
		{runOpts{}, append(dst.with("copy"), fromArgs(src)...), 1, []string{"source repository", "encrypted", "-from-password"}},
		{runOpts{env: []string{"CLOUDSTIC_FROM_PASSWORD=wrong"}}, append(dst.with("copy"), fromArgs(src)...), 1, []string{"source repository", "wrong password"}},
		{fromPassword, append(src.with("copy"), fromArgs(src)...), 1, []string{"same repository"}},
		{fromPassword, append(append(dst.with("copy"), fromArgs(src)...), "ffffffff"), 1, []string{"ffffffff"}},
		{fromPassword, dst.with("copy", "-from-store", "local:"+filepath.Join(t.TempDir(), "none")), 1, []string{"not initialized"}},
	}
	for _, c := range cases {
		res := runWith(t, c.opts, c.args...)
		wantCode(t, res, c.code)
		wantOneLineError(t, res, c.subs...)
	}
	if n := len(listJSON(t, dst)); n != 0 {
		t.Fatalf("failed copies stored %d snapshots", n)
	}
}

// TestCopyFromProfile takes the source repository from a profile of
// profiles.yaml (its store's URI and password_secret), as -profile does
// for the destination.
func TestCopyFromProfile(t *testing.T) {
	t.Parallel()
	src := newLocalRepo(t)
	tree := smallTree(t, 24)
	sid := backupJSON(t, src, tree).SnapshotID
	dst := newRepo(t, storeKind{"local", localStore})
	profiles := filepath.Join(t.TempDir(), "profiles.yaml")
	yaml := "version: 1\nstores:\n  usb:\n    uri: " + src[1] + "\n    password_secret: env://USB_PASSWORD\n" +
		"profiles:\n  laptop:\n    source: local:" + tree + "\n    store: usb\n"
	if err := os.WriteFile(profiles, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runWith(t, runOpts{env: []string{"USB_PASSWORD=correct horse"}},
		dst.with("copy", "-json", "-from-profile", "laptop", "-profiles-file", profiles)...)
	if res.code != 0 {
		t.Fatalf("copy -from-profile: %v", res)
	}
	var out copyOut
	decodeJSON(t, res, &out)
	if len(out.Copied) != 1 || out.Copied[0].SourceID != sid {
		t.Fatalf("copy -from-profile: %+v", out)
	}
	restoreAllEqual(t, dst, map[string]string{tree: tree})
}
