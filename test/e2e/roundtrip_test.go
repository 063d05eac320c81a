//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// backupOut is the -json document of backup.
type backupOut struct {
	SnapshotID string             `json:"snapshot_id"`
	Parent     string             `json:"parent"`
	DryRun     bool               `json:"dry_run"`
	Errors     int                `json:"errors"`
	ErrorPaths []string           `json:"error_paths"`
	Summary    map[string]float64 `json:"summary"`
}

// listEntry is one element of list -json.
type listEntry struct {
	ID   string   `json:"id"`
	Path string   `json:"path"`
	Tags []string `json:"tags"`
}

// lsOut is the -json document of ls.
type lsOut struct {
	SnapshotID string `json:"snapshot_id"`
	Entries    []struct {
		Path   string `json:"path"`
		Type   string `json:"type"`
		Size   int64  `json:"size"`
		Target string `json:"target"`
	} `json:"entries"`
}

// backupJSON runs backup -json of src and returns its document.
func backupJSON(t *testing.T, r repoArgs, src string, args ...string) backupOut {
	t.Helper()
	res := mustRun(t, r.with("backup", append([]string{"-json", "-source", "local:" + src}, args...)...)...)
	var out backupOut
	decodeJSON(t, res, &out)
	if out.Errors != 0 || len(out.SnapshotID) != 64 {
		t.Fatalf("backup: %d errors, snapshot id %q\n%v", out.Errors, out.SnapshotID, res)
	}
	return out
}

// listJSON runs list -json.
func listJSON(t *testing.T, r repoArgs) []listEntry {
	t.Helper()
	var out struct{ Snapshots []listEntry }
	decodeJSON(t, mustRun(t, r.with("list", "-json")...), &out)
	return out.Snapshots
}

// countFiles counts the regular files below root.
func countFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	for _, e := range scanTree(t, root) {
		if e.typ() == unix.S_IFREG {
			n++
		}
	}
	return n
}

// TestRoundTrip is the core suite, run against every store kind: a tree
// with every kind of entry is backed up and restored as a directory, as a
// zip file, in parts and as a dry run; then incremental backups.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "src")
	info := makeTree(t, src, treeOpts{big: true, seed: 1})
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			out := backupJSON(t, r, src, "-tag", "e2e", "-tag", kind.name)
			if n := countFiles(t, src); int(out.Summary["files_new"]) != n {
				t.Errorf("backup: files_new %v, want %d", out.Summary["files_new"], n)
			}
			snaps := listJSON(t, r)
			if len(snaps) != 1 || snaps[0].ID != out.SnapshotID || !slices.Equal(snaps[0].Tags, []string{"e2e", kind.name}) {
				t.Errorf("list -json: %+v, want one snapshot %s tagged e2e,%s", snaps, out.SnapshotID, kind.name)
			}
			t.Run("dir", func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "out")
				mustRun(t, r.with("restore", out.SnapshotID, "-format", "dir", "-output", dst)...)
				compareTrees(t, src, dst, cmpOpts(info))
			})
			t.Run("zip", func(t *testing.T) {
				z := filepath.Join(t.TempDir(), "out.zip")
				res := mustRun(t, r.with("restore", "-format", "zip", "-output", z)...)
				if !strings.Contains(res.stderr, "fifo") {
					t.Errorf("restore -format zip: no warning about the FIFO it cannot store:\n%v", res)
				}
				compareZip(t, src, z)
			})
			t.Run("ls", func(t *testing.T) { checkLs(t, r, src, out.SnapshotID) })
			testRestoreParts(t, r, src)
			t.Run("incremental", func(t *testing.T) { testIncremental(t, r) })
		})
	}
}

// testRestoreParts restores one file, one directory, and a dry run.
func testRestoreParts(t *testing.T, r repoArgs, src string) {
	t.Run("path-file", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "out")
		mustRun(t, r.with("restore", "latest", "-path", "a/b/c/d/deep.txt", "-output", dst)...)
		got := scanTree(t, dst)
		want := []string{"a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/deep.txt"}
		if _, flat := got["deep.txt"]; !flat && !slices.Equal(sortedKeys(got), want) {
			t.Fatalf("restore -path FILE wrote %q, want deep.txt alone or %q", sortedKeys(got), want)
		}
		rel := "a/b/c/d/deep.txt"
		if _, flat := got["deep.txt"]; flat {
			rel = "deep.txt"
		}
		compareContent(t, rel, filepath.Join(src, "a/b/c/d/deep.txt"), filepath.Join(dst, rel))
	})
	t.Run("path-dir", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "out")
		mustRun(t, r.with("restore", "-path", "a/b/", "-output", dst)...)
		got := filepath.Join(dst, "a", "b")
		if _, err := os.Lstat(got); err != nil {
			got = dst // the directory's contents at the top
		}
		compareTrees(t, filepath.Join(src, "a", "b"), got, cmpOpts{})
	})
	t.Run("dry-run", func(t *testing.T) {
		dir := t.TempDir()
		for _, o := range []string{"out", "out.zip"} {
			mustRun(t, r.with("restore", "-dry-run", "-output", filepath.Join(dir, o))...)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("restore -dry-run wrote %d entries, e.g. %s", len(left), left[0].Name())
		}
	})
}

// checkLs compares ls -json (and plain ls) with the source tree.
func checkLs(t *testing.T, r repoArgs, src, sid string) {
	var out lsOut
	decodeJSON(t, mustRun(t, r.with("ls", "-json", sid[:8])...), &out)
	if out.SnapshotID != sid {
		t.Errorf("ls -json: snapshot_id %q, want %q", out.SnapshotID, sid)
	}
	var got []string
	for _, e := range out.Entries {
		got = append(got, e.Path)
		if e.Path == "link-rel" && (e.Type != "symlink" || e.Target != "a/b/c/d/deep.txt") {
			t.Errorf("ls -json: link-rel is %+v", e)
		}
	}
	var want []string
	for _, rel := range sortedKeys(scanTree(t, src)) {
		// JSON strings cannot hold invalid UTF-8: the encoder
		// substitutes U+FFFD, so expect what a JSON round trip gives.
		b, _ := json.Marshal(filepath.ToSlash(rel)) // a string always marshals
		var s string
		_ = json.Unmarshal(b, &s) // see above
		want = append(want, s)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ls -json paths:\n got %q\nwant %q", got, want)
	}
	res := mustRun(t, r.with("ls")...)
	for _, line := range []string{"a/b/c/d/deep.txt  (", "link-rel -> a/b/c/d/deep.txt", "emptydir/"} {
		if !strings.Contains(res.stdout, line) {
			t.Errorf("ls: no line with %q:\n%s", line, res.stdout)
		}
	}
}

// testIncremental backs up a small tree, changes one file, then deletes
// one, checking the summary each time.
func testIncremental(t *testing.T, r repoArgs) {
	src := filepath.Join(t.TempDir(), "inc")
	makeTree(t, src, treeOpts{seed: 7})
	n := countFiles(t, src)
	first := backupJSON(t, r, src)
	if int(first.Summary["files_new"]) != n {
		t.Errorf("first backup: files_new %v, want %d", first.Summary["files_new"], n)
	}
	if err := os.WriteFile(filepath.Join(src, "a/b/sibling"), []byte("changed content"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := backupJSON(t, r, src)
	wantSummary(t, "after changing one file", second.Summary, map[string]int{
		"files_new": 0, "files_changed": 1, "files_unmodified": n - 1, "files_removed": 0})
	if second.Parent != first.SnapshotID {
		t.Errorf("second backup: parent %q, want %q", second.Parent, first.SnapshotID)
	}
	if err := os.Remove(filepath.Join(src, "f4095")); err != nil {
		t.Fatal(err)
	}
	third := backupJSON(t, r, src)
	wantSummary(t, "after deleting one file", third.Summary, map[string]int{
		"files_new": 0, "files_changed": 0, "files_unmodified": n - 1, "files_removed": 1})
	// Same size, same mtime, new content: only the ctime tells.
	sameSize(t, filepath.Join(src, "f4096"))
	fourth := backupJSON(t, r, src)
	wantSummary(t, "after rewriting a file keeping size and mtime", fourth.Summary, map[string]int{
		"files_new": 0, "files_changed": 1, "files_unmodified": n - 2, "files_removed": 0})
	dst := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", fourth.SnapshotID[:10], "-output", dst)...)
	compareTrees(t, src, dst, cmpOpts{})
}

func wantSummary(t *testing.T, when string, got map[string]float64, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != float64(v) {
			t.Errorf("%s: summary %s = %d, want %d (summary %v)", when, k, int(got[k]), v, got)
		}
	}
}

// sameSize rewrites p with other bytes of the same length and puts its
// mtime back.
func sameSize(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(p, data, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}
