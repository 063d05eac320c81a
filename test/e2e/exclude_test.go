//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree creates files (with content) and directories (names ending
// in "/") below a new source directory.
func writeTree(t *testing.T, entries map[string]string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	for rel, content := range entries {
		p := filepath.Join(src, rel)
		dir := p
		if !strings.HasSuffix(rel, "/") {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(rel, "/") {
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return src
}

// lsPaths lists a snapshot's paths, sorted.
func lsPaths(t *testing.T, r repoArgs, sid string) []string {
	t.Helper()
	var ls lsOut
	decodeJSON(t, mustRun(t, r.with("ls", "-json", sid)...), &ls)
	var paths []string
	for _, e := range ls.Entries {
		paths = append(paths, e.Path)
	}
	slices.Sort(paths)
	return paths
}

// snapshotExcludes is the excludes field of `cat snapshot`.
type snapshotExcludes struct {
	Excludes *struct {
		Patterns      []string `json:"patterns"`
		IfPresent     []string `json:"if_present"`
		Caches        bool     `json:"caches"`
		LargerThan    int64    `json:"larger_than"`
		OneFileSystem bool     `json:"one_file_system"`
	} `json:"excludes"`
}

func catExcludes(t *testing.T, r repoArgs, sid string) snapshotExcludes {
	t.Helper()
	var doc struct {
		Snapshot snapshotExcludes `json:"snapshot"`
	}
	res := mustRun(t, r.with("cat", "snapshot", sid)...)
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("cat snapshot: %v\n%v", err, res)
	}
	return doc.Snapshot
}

// TestExcludeGitignore backs up a tree with a Cloudstic user's exclude
// file and -exclude flags, in gitignore syntax, and checks exactly what
// was stored, and that `cat snapshot` shows the patterns.
func TestExcludeGitignore(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := writeTree(t, map[string]string{
		".git/config": "c", "proj/.git/HEAD": "h", "proj/cache/blob": "b", "proj/notdir/cache": "a file named cache",
		"build/out.o": "o", "src/build/keep.c": "c", "logs/a.log": "l", "logs/deep/b.log": "l",
		"logs/important.log": "keep", "build2/output": "o", "x/build2/output": "keep", "#notes": "n",
		"trailing": "t", "tmp1": "t", "tmp/": "", "nested/.git/important.log": "inside an excluded dir",
	})
	exFile := filepath.Join(t.TempDir(), "excludes")
	lines := "# Cloudstic exclude file\n\n.git/\ncache/\n**/*.log\n!important.log\n/build\nbuild2/output\n\\#notes\ntrailing   \r\n"
	if err := os.WriteFile(exFile, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := backupJSON(t, r, src, "-exclude", "tmp*", "-exclude-file", exFile)
	want := []string{"build2", "logs", "logs/deep", "logs/important.log", "nested", "proj", "proj/notdir",
		"proj/notdir/cache", "src", "src/build", "src/build/keep.c", "x", "x/build2", "x/build2/output"}
	if got := lsPaths(t, r, out.SnapshotID); !slices.Equal(got, want) {
		t.Errorf("stored\n%q\nwant\n%q", got, want)
	}
	ex := catExcludes(t, r, out.SnapshotID).Excludes
	wantPatterns := []string{"tmp*", ".git/", "cache/", "**/*.log", "!important.log", "/build", "build2/output", `\#notes`, "trailing   "}
	if ex == nil || !slices.Equal(ex.Patterns, wantPatterns) {
		t.Errorf("cat snapshot shows excludes %+v, want patterns %q", ex, wantPatterns)
	}
}

// TestExcludeRulesCLI covers -exclude-if-present, -exclude-caches,
// -exclude-larger-than and -one-file-system (with a tmpfs mounted in the
// source, as root).
func TestExcludeRulesCLI(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := writeTree(t, map[string]string{
		"private/.nobackup": "", "private/secret": "s", "cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55 a test",
		"cache/blob": "b", "notcache/CACHEDIR.TAG": "no signature", "big": strings.Repeat("x", 2049), "small": strings.Repeat("x", 2048),
		"mnt/": "",
	})
	mnt := filepath.Join(src, "mnt")
	mounted := exec.Command("mount", "-t", "tmpfs", "none", mnt).Run() == nil
	if mounted {
		t.Cleanup(func() {
			if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
				t.Errorf("umount: %v: %s", err, out)
			}
		})
		if err := os.WriteFile(filepath.Join(mnt, "other-fs"), []byte("o"), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("cannot mount a tmpfs (not root?): -one-file-system is checked on a tree without mounts only")
	}
	out := backupJSON(t, r, src, "-exclude-if-present", ".nobackup", "-exclude-caches", "-exclude-larger-than", "2k", "-one-file-system")
	want := []string{"mnt", "notcache", "notcache/CACHEDIR.TAG", "small"}
	if got := lsPaths(t, r, out.SnapshotID); !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	ex := catExcludes(t, r, out.SnapshotID).Excludes
	if ex == nil || !slices.Equal(ex.IfPresent, []string{".nobackup"}) || !ex.Caches || ex.LargerThan != 2048 || !ex.OneFileSystem {
		t.Errorf("cat snapshot shows excludes %+v", ex)
	}
	if mounted {
		all := backupJSON(t, r, src)
		if got := lsPaths(t, r, all.SnapshotID); !slices.Contains(got, "mnt/other-fs") {
			t.Errorf("without -one-file-system the mounted file system is stored: got %q", got)
		}
	}
}

// TestExcludeErrors: bad exclude input is a one-line usage error, and no
// snapshot is written.
func TestExcludeErrors(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 4)
	badFile := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(badFile, []byte("ok\n[unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		subs []string
	}{
		{"unbalanced bracket", []string{"-exclude", "[x"}, []string{"-exclude", "[x"}},
		{"comment as a flag", []string{"-exclude", "#x"}, []string{"-exclude", `\#x`}},
		{"empty pattern", []string{"-exclude", ""}, []string{"-exclude", "empty"}},
		{"posix class", []string{"-exclude", "[[:digit:]]"}, []string{"[:alpha:]"}},
		{"missing exclude file", []string{"-exclude-file", filepath.Join(src, "none")}, []string{"-exclude-file", "none"}},
		{"bad line in file", []string{"-exclude-file", badFile}, []string{"-exclude-file", "[unclosed"}},
		{"bad size", []string{"-exclude-larger-than", "10X"}, []string{"-exclude-larger-than", "10X"}},
		{"negative size", []string{"-exclude-larger-than", "-1"}, []string{"-exclude-larger-than"}},
		{"path as if-present name", []string{"-exclude-if-present", "a/b"}, []string{"-exclude-if-present", "a/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r.with("backup", append([]string{"-source", "local:" + src}, tt.args...)...)...)
			wantCode(t, res, 2)
			wantOneLineError(t, res, tt.subs...)
		})
	}
	if got := listJSON(t, r); len(got) != 0 {
		t.Errorf("%d snapshots written by failed backups", len(got))
	}
}
