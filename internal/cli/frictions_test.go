package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// frictionRepo makes an unencrypted repository in dir holding one
// snapshot of a small tree, backed up with -source given as a plain path.
func frictionRepo(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "top.txt"), "top")
	uxWrite(t, filepath.Join(src, "docs", "a.txt"), "a")
	uxWrite(t, filepath.Join(src, "docs", "sub", "b.txt"), "b")
	uxWrite(t, filepath.Join(src, "other", "c.txt"), "c")
	uxOK(t, dir, "init", "-no-encryption")
	uxOK(t, dir, "backup", "-source", src)
	return src
}

func TestLsPaths(t *testing.T) {
	dir := t.TempDir()
	src := frictionRepo(t, dir)
	cases := []struct {
		name   string
		args   []string
		code   int
		want   []string // lines of stdout, in order; nil: stdout is not checked
		stderr string
	}{
		{"whole snapshot", []string{"ls", "latest"}, ExitOK,
			[]string{"docs/", "docs/a.txt  (1 B)", "docs/sub/", "docs/sub/b.txt  (1 B)", "other/", "other/c.txt  (1 B)", "top.txt  (3 B)"}, ""},
		{"one directory", []string{"ls", "latest", "docs/sub"}, ExitOK, []string{"docs/sub/", "docs/sub/b.txt  (1 B)"}, ""},
		{"leading slash and a file", []string{"ls", "latest", "/other/", "top.txt"}, ExitOK,
			[]string{"other/", "other/c.txt  (1 B)", "top.txt  (3 B)"}, ""},
		{"absolute source path", []string{"ls", "latest", filepath.Join(src, "docs", "sub")}, ExitOK,
			[]string{"docs/sub/", "docs/sub/b.txt  (1 B)"}, ""},
		{"missing path", []string{"ls", "latest", "nosuch"}, ExitError, nil, "nosuch: no such file or directory in the snapshot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := uxRun(t, dir, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", r.code, c.code, r.stderr, c.stderr)
			}
			if c.want == nil {
				return
			}
			if got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestSourcePlainPath(t *testing.T) {
	dir := t.TempDir()
	frictionRepo(t, dir) // backs up -source DIR, a plain path
	cases := []struct {
		uri  string
		code int
		msg  string
	}{
		{"s3:bucket/x", ExitUsage, "want a path, local:PATH or sftp://"},
		{"ftp://host/x", ExitUsage, "want a path, local:PATH or sftp://"},
		{filepath.Join(dir, "missing"), ExitError, "missing"},
	}
	for _, c := range cases {
		t.Run(c.uri, func(t *testing.T) {
			r := uxRun(t, dir, "backup", "-source", c.uri)
			if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", r.code, c.code, r.stderr, c.msg)
			}
		})
	}
}

func TestIsLocalDrivePath(t *testing.T) {
	cases := map[string]bool{`C:\Users\me`: true, "c:/x": true, "local:C:\\x": true, "s3:b": false, "b2:b/x": false,
		"sftp://h/x": false, "1:/x": false, "C:": false, "rel/dir": true, "./a:b": true}
	for uri, want := range cases {
		t.Run(uri, func(t *testing.T) {
			if got := operation.IsLocal(uri); got != want {
				t.Fatalf("IsLocal(%q) = %v, want %v", uri, got, want)
			}
		})
	}
}

// TestHelpOwnFlagsFirst: `help CMD` lists the command's own flags before
// any global one, and the global ones under their group's heading.
func TestHelpOwnFlagsFirst(t *testing.T) {
	cases := []struct {
		cmd     string
		own     string   // a flag of the command's own
		inOrder []string // headings and flags, in the order they must appear
	}{
		{"ls", "-l", []string{"\nflags:\n  -l", "\nglobal flags (store):\n", "  -store string", "\nglobal flags (encryption):\n",
			"  -password string", "\nglobal flags (output):\n", "  -json\n"}},
		{"find", "-path-prefix", []string{"\nflags:\n", "  -path-prefix", "\nglobal flags (store):\n", "  -b2-app-key"}},
		{"backup", "-source", []string{"\nflags:\n", "  -source value", "\nglobal flags (store):\n", "\nglobal flags (profiles):\n", "  -profile string"}},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			out := uxOK(t, "", "help", c.cmd).stdout
			at := 0
			for _, s := range c.inOrder {
				i := strings.Index(out[at:], s)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", s, out)
				}
				at += i + len(s)
			}
			if g := strings.Index(out, "global flags"); strings.Index(out, "\n  "+c.own) > g {
				t.Fatalf("%s listed after the global flags:\n%s", c.own, out)
			}
		})
	}
}

// TestFindGrouped: find prints each file once, as ls prints its path, with
// its source and one line per snapshot holding it; -json likewise.
func TestFindGrouped(t *testing.T) {
	dir := t.TempDir()
	src := frictionRepo(t, dir)
	uxWrite(t, filepath.Join(src, "docs", "a.txt"), "changed")
	uxOK(t, dir, "backup", "-source", src)
	out := uxOK(t, dir, "find", "a.txt").stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "docs/a.txt  (local:"+src+")" || !strings.HasPrefix(lines[1], "  ") ||
		!strings.HasSuffix(lines[1], " 1 B") || !strings.HasSuffix(lines[2], " 7 B") {
		t.Fatalf("find a.txt:\n%s", out)
	}
	if out := uxOK(t, dir, "find", "sub").stdout; !strings.HasPrefix(out, "docs/sub/  (") {
		t.Fatalf("find sub (a directory, shown as ls shows it):\n%s", out)
	}
	var res findResult
	uxJSON(t, uxOK(t, dir, "find", "-json", "*.txt").stdout, &res)
	got := map[string]int{}
	for _, f := range res.Matches {
		if f.SourceURI != "local:"+src {
			t.Errorf("%s: source %q", f.Path, f.SourceURI)
		}
		for _, v := range f.Versions {
			got[f.Path] += len(v.Snapshots)
		}
	}
	want := map[string]int{"top.txt": 2, "docs/a.txt": 2, "docs/sub/b.txt": 2, "other/c.txt": 2}
	if len(got) != len(want) {
		t.Fatalf("find -json: %v, want %v", got, want)
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("find -json: %s in %d snapshots, want %d (all: %v)", p, got[p], n, got)
		}
	}
}

// TestRestoreOverExisting: restoring over an earlier restore prints one
// count of the files left alone, not a warning per file; -verbose lists
// them.
func TestRestoreOverExisting(t *testing.T) {
	dir := t.TempDir()
	frictionRepo(t, dir)
	out := filepath.Join(dir, "out")
	uxOK(t, dir, "restore", "-output", out)
	cases := []struct {
		name     string
		args     []string
		stdout   []string
		notShown string // in neither stdout nor stderr
	}{
		{"count only", nil, []string{"4 existing files were left untouched (-verbose lists them)"}, "top.txt"},
		{"verbose lists them", []string{"-verbose"}, []string{"left untouched: top.txt\n", "left untouched: docs/sub/b.txt\n",
			"4 existing files were left untouched\n"}, "warning"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := uxOK(t, dir, append([]string{"restore", "-output", out}, c.args...)...)
			for _, s := range c.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if strings.Contains(r.stderr, c.notShown) || (c.args == nil && strings.Contains(r.stdout, c.notShown)) {
				t.Errorf("%q shown:\nstdout: %s\nstderr: %s", c.notShown, r.stdout, r.stderr)
			}
		})
	}
}

// TestErrorPaths: backup -json names each entry it could not read by its
// path (that of the error's fs.PathError), or by the error's text.
func TestErrorPaths(t *testing.T) {
	cases := []struct {
		name string
		errs []error
		want []string
	}{
		{"none", nil, []string{}},
		{"path errors", []error{fmt.Errorf("/src/a: %w", &fs.PathError{Op: "open", Path: "/src/a", Err: fs.ErrPermission}),
			&fs.PathError{Op: "open", Path: "/src/dir", Err: fs.ErrPermission}}, []string{"/src/a", "/src/dir"}},
		{"no path", []error{errors.New("metadata of the source directory itself:\nbroken")}, []string{"metadata of the source directory itself:; broken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := errorPaths(c.errs); !slices.Equal(got, c.want) {
				t.Fatalf("errorPaths = %q, want %q", got, c.want)
			}
		})
	}
}

// TestCheckAfterPrune: blobs prune kept, their packs being under its
// repack threshold, are not reported by check as blobs prune removes; the
// note names the threshold.
func TestCheckAfterPrune(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	big := make([]byte, 200<<10)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	uxWrite(t, filepath.Join(src, "big"), string(big))
	uxWrite(t, filepath.Join(src, "small"), strings.Repeat("x", 100))
	uxOK(t, dir, "init", "-no-encryption")
	var first struct {
		SnapshotID string `json:"snapshot_id"`
	}
	uxJSON(t, uxOK(t, dir, "backup", "-source", src, "-json").stdout, &first)
	if err := os.Remove(filepath.Join(src, "small")); err != nil {
		t.Fatal(err)
	}
	uxOK(t, dir, "backup", "-source", src)
	uxOK(t, dir, "forget", first.SnapshotID)
	if out := uxOK(t, dir, "check").stderr; !strings.Contains(out, "prune keeps 1 of them") || !strings.Contains(out, "30% unused") {
		t.Fatalf("check before prune:\n%s", out)
	}
	uxOK(t, dir, "prune")
	out := uxOK(t, dir, "check").stderr
	if strings.Contains(out, "prune removes") || !strings.Contains(out, "prune keeps 1 of them") || !strings.Contains(out, "at most 30% unused, under its repack threshold") {
		t.Fatalf("check right after prune:\n%s", out)
	}
}

// TestCheckUnindexedMargin: check says of a pack no index names what prune
// does with it: kept while younger than prune's margin (named), removed
// once older; and prune then does exactly that.
func TestCheckUnindexedMargin(t *testing.T) {
	dir := t.TempDir()
	frictionRepo(t, dir)
	store := filepath.Join(dir, "store")
	young := strings.Repeat("ab", 32)
	old := strings.Repeat("cd", 32)
	for _, name := range []string{young, old} {
		uxWrite(t, filepath.Join(store, "data", name[:2], name), "leftover of an interrupted backup")
	}
	hoursAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(store, "data", old[:2], old), hoursAgo, hoursAgo); err != nil {
		t.Fatal(err)
	}
	notes := func() map[string]string {
		var doc struct {
			Result struct {
				Notes []struct{ Key, Message string } `json:"notes"`
			} `json:"result"`
		}
		uxJSON(t, uxOK(t, dir, "check", "-json").stdout, &doc)
		out := map[string]string{}
		for _, n := range doc.Result.Notes {
			out[n.Key] = n.Message
		}
		return out
	}
	before := notes()
	if m := before["data/"+young[:2]+"/"+young]; !strings.Contains(m, "less than 1m35s ago (prune's -margin)") || !strings.Contains(m, "prune keeps it") {
		t.Errorf("young pack: %q (all notes: %v)", m, before)
	}
	if m := before["data/"+old[:2]+"/"+old]; !strings.Contains(m, "older than prune's 1m35s margin (prune removes it)") {
		t.Errorf("old pack: %q (all notes: %v)", m, before)
	}
	uxOK(t, dir, "prune")
	for name, want := range map[string]bool{young: true, old: false} {
		if _, err := os.Stat(filepath.Join(store, "data", name[:2], name)); (err == nil) != want {
			t.Errorf("after prune, pack %s… exists: %v, want %v", name[:8], err == nil, want)
		}
	}
}
