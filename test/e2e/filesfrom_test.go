//go:build unix

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBackupSeveralRoots: several -source flags, -files-from (comments,
// blank lines, globs), -files-from-verbatim (a name with spaces, # and
// glob characters) and -files-from-raw (NUL-separated, a newline in a
// name) each store exactly the paths they name, under their absolute
// paths, and a second run of the same roots has the first as its parent.
func TestBackupSeveralRoots(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.EvalSymlinks(writeTree(t, map[string]string{
		"docs/a.txt": "a", "docs/b.md": "b", "photos/p.jpg": "p", "other/x": "x",
		"#odd [name]*.txt": "odd", "new\nline": "nl", "logs/1.log": "1", "logs/2.log": "2",
	}))
	if err != nil {
		t.Fatal(err)
	}
	// Modified long before the first backup (their change times are
	// recent: a file the racy margin makes the second run read again
	// counts as unmodified when its content is the same).
	old := time.Now().Add(-time.Hour)
	err = filepath.WalkDir(src, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	list := func(name, content string) string {
		p := filepath.Join(base, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in := func(rel string) string { return filepath.Join(src, rel) }
	tests := []struct {
		name string
		args []string
		want []string // stored below src
	}{
		{"two sources", []string{"-source", "local:" + in("docs"), "-source", "local:" + in("photos")},
			[]string{"docs", "docs/a.txt", "docs/b.md", "photos", "photos/p.jpg"}},
		{"files-from", []string{"-files-from", list("globs", "# my list\n\n  "+in("logs/*.log")+"  \r\n"+in("docs/a.txt")+"\n"+in("none*")+"\n")},
			[]string{"docs", "docs/a.txt", "logs", "logs/1.log", "logs/2.log"}},
		{"files-from-verbatim", []string{"-files-from-verbatim", list("verbatim", in("#odd [name]*.txt")+"\n\n"+in("photos")+"\r\n")},
			[]string{"#odd [name]*.txt", "photos", "photos/p.jpg"}},
		{"files-from-raw", []string{"-files-from-raw", list("raw", in("new\nline")+"\x00"+in("other/x")+"\x00")},
			[]string{"new\nline", "other", "other/x"}},
		{"source and files-from", []string{"-source", "local:" + in("other"), "-files-from", list("one", in("docs/b.md"))},
			[]string{"docs", "docs/b.md", "other", "other/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newLocalRepo(t)
			first := mustRun(t, r.with("backup", append([]string{"-json"}, tt.args...)...)...)
			var out backupOut
			decodeJSON(t, first, &out)
			var got []string
			for _, p := range lsPaths(t, r, out.SnapshotID) {
				if rel, ok := strings.CutPrefix(p, strings.TrimPrefix(src, "/")+"/"); ok {
					got = append(got, rel)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("stored %q, want %q", got, tt.want)
			}
			var second backupOut
			decodeJSON(t, mustRun(t, r.with("backup", append([]string{"-json"}, tt.args...)...)...), &second)
			if s := second.Summary; second.Parent != out.SnapshotID || s["files_new"]+s["files_changed"] != 0 || s["files_unmodified"] == 0 {
				t.Errorf("second run: parent %q (want %q), summary %v: want every file unmodified", second.Parent, out.SnapshotID, s)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		r := newLocalRepo(t)
		for _, args := range [][]string{
			{"-source", "local:" + in("docs"), "-source", "sftp://h/x"},
			{"-files-from", filepath.Join(base, "no-such-list")},
			{"-files-from-verbatim", list("missing", in("no-such-file"))},
			{"-files-from", list("empty", "# nothing\n")},
		} {
			res := run(t, r.with("backup", args...)...)
			if res.code == 0 {
				t.Fatalf("want a failure, got %v", res)
			}
			wantOneLineError(t, res)
		}
	})
}
