//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// smallTree builds a small source tree (no big files) in a new temp dir.
func smallTree(t *testing.T, seed uint64) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	makeTree(t, src, treeOpts{seed: seed})
	return src
}

// TestUsageAndRepoErrors covers the error paths of the common commands:
// each is one line on stderr with the documented exit code.
func TestUsageAndRepoErrors(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 3)
	mustRun(t, r.with("backup", "-source", "local:"+src)...)
	empty := t.TempDir()
	notRepo := repoArgs{"-store", "local:" + empty, "-password", "x"}
	missing := repoArgs{"-store", "local:" + filepath.Join(empty, "nothing-here"), "-password", "x"}
	wrongPW := repoArgs{r[0], r[1], "-password", "not the password"}
	tests := []struct {
		name string
		args []string
		code int
		subs []string
	}{
		{"wrong password list", wrongPW.with("list"), 1, []string{"wrong password"}},
		{"wrong password restore", wrongPW.with("restore", "-output", filepath.Join(empty, "o")), 1, []string{"wrong password"}},
		{"not a repository list", notRepo.with("list"), 1, []string{"run 'cloudstic init'"}},
		{"not a repository backup", notRepo.with("backup", "-source", "local:"+src), 1, []string{"run 'cloudstic init'"}},
		{"store path missing", missing.with("ls"), 1, []string{"run 'cloudstic init'"}},
		{"init twice", r.with("init"), 1, []string{"already exists"}},
		{"source missing", r.with("backup", "-source", "local:"+filepath.Join(empty, "no-such-dir")), 1, []string{"no-such-dir"}},
		{"source is a file", r.with("backup", "-source", "local:"+filepath.Join(src, "one")), 1, []string{"not a directory"}},
		{"unknown flag", r.with("backup", "-sorce", "local:"+src), 2, []string{"-sorce", "did you mean -source"}},
		{"unknown flag restore", r.with("restore", "-ouptut", "x"), 2, []string{"did you mean -output"}},
		{"no source", r.with("backup"), 2, []string{"-source"}},
		{"bad format", r.with("restore", "-format", "tar"), 2, []string{"tar"}},
		{"unknown command", []string{"bakup"}, 2, []string{"did you mean \"backup\""}},
		{"restore path not found", r.with("restore", "-path", "nope/nothing", "-output", filepath.Join(empty, "o2")), 1, []string{"nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.args...)
			wantCode(t, res, tt.code)
			wantOneLineError(t, res, tt.subs...)
		})
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("failed commands left %d entries in %s (e.g. %s)", len(left), empty, left[0].Name())
	}
}

// TestSnapshotRefs resolves snapshots by id prefix and rejects unknown,
// short, non-hex and ambiguous ones.
func TestSnapshotRefs(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 4)
	first := backupJSON(t, r, src)
	second := backupJSON(t, r, src)
	for _, ref := range []string{first.SnapshotID[:6], strings.ToUpper(first.SnapshotID[:7]), first.SnapshotID, "latest"} {
		t.Run("ok "+ref, func(t *testing.T) {
			var out lsOut
			decodeJSON(t, mustRun(t, r.with("ls", "-json", ref)...), &out)
			want := first.SnapshotID
			if ref == "latest" {
				want = second.SnapshotID
			}
			if out.SnapshotID != want {
				t.Errorf("ls %s: snapshot %s, want %s", ref, out.SnapshotID, want)
			}
		})
	}
	unknown := unusedPrefix(first.SnapshotID, second.SnapshotID)
	ambiguous := makeAmbiguous(t, r)
	for _, tt := range []struct{ name, ref, sub string }{
		{"unknown", unknown, unknown},
		{"too short", first.SnapshotID[:5], "at least 6"},
		{"not hex", "zzzzzzzz", "zzzzzzzz"},
		{"ambiguous", ambiguous, "matches 2 snapshots"},
	} {
		for _, cmd := range [][]string{{"ls"}, {"restore", "-output", filepath.Join(t.TempDir(), "o")}} {
			t.Run(tt.name+" "+cmd[0], func(t *testing.T) {
				res := run(t, r.with(cmd[0], append([]string{tt.ref}, cmd[1:]...)...)...)
				wantCode(t, res, 1)
				wantOneLineError(t, res, tt.sub)
			})
		}
	}
}

// unusedPrefix returns a 6-digit hex prefix of none of ids.
func unusedPrefix(ids ...string) string {
	for _, c := range "0123456789abcdef" {
		p := strings.Repeat(string(c), 6)
		used := false
		for _, id := range ids {
			used = used || strings.HasPrefix(id, p)
		}
		if !used {
			return p
		}
	}
	panic("unreachable")
}

// TestRestoreKeepsExisting restores into a directory holding a file of the
// snapshot: the file is left as it was, -json's skipped names it, and no
// warning per file left alone floods stderr (the human output counts them:
// internal/cli's TestRestoreOverExisting).
func TestRestoreKeepsExisting(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := smallTree(t, 5)
	mustRun(t, r.with("backup", "-source", "local:"+src)...)
	dst := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dst, "one")
	if err := os.WriteFile(keep, []byte("mine, keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, r.with("restore", "-json", "-output", dst)...)
	var out struct {
		Skipped []string `json:"skipped"`
		Files   int      `json:"files"`
	}
	decodeJSON(t, res, &out)
	if len(out.Skipped) != 1 || out.Skipped[0] != "one" {
		t.Errorf("restore -json: skipped %q, want [one]", out.Skipped)
	}
	if strings.Contains(res.stderr, "one exists") {
		t.Errorf("restore: a warning per file left alone:\n%v", res)
	}
	got, err := os.ReadFile(keep)
	if err != nil || string(got) != "mine, keep me" {
		t.Errorf("existing file: %q, %v; want it untouched", got, err)
	}
	if fi, err := os.Stat(keep); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("existing file mode changed: %v %v", fi.Mode(), err)
	}
	if data, err := os.ReadFile(filepath.Join(dst, "a/b/c/d/deep.txt")); err != nil || string(data) != "deep 5\n" {
		t.Errorf("other files not restored: %q %v", data, err)
	}
}

// TestUnreadable backs up a tree with an unreadable file and directory:
// exit 3, both named on stderr, everything else saved. As root, the
// backup runs as the unprivileged user nobody.
func TestUnreadable(t *testing.T) {
	t.Parallel()
	o := runOpts{}
	base := t.TempDir()
	if os.Geteuid() == 0 {
		// t.TempDir's parents are closed to other users: use an open one.
		var err error
		if base, err = os.MkdirTemp("", "cloudstic-e2e-nobody-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.RemoveAll(base); err != nil {
				t.Error(err)
			}
		})
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
		o.cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	src := filepath.Join(base, "src")
	b := treeBuilder{t, src}
	b.dir(".", 0o755)
	b.file("ok.txt", []byte("readable\n"), 0o644)
	b.file("secret.txt", []byte("unreadable\n"), 0o000)
	b.file("closed/inside", []byte("x\n"), 0o644)
	b.check(os.Chmod(b.p("closed"), 0o000))
	t.Cleanup(func() { // so that t.TempDir's cleanup can remove it
		if err := os.Chmod(b.p("closed"), 0o755); err != nil {
			t.Error(err)
		}
	})
	store := filepath.Join(base, "repo")
	b.check(os.Mkdir(store, 0o700))
	if o.cred != nil {
		b.check(os.Chown(store, int(o.cred.Uid), int(o.cred.Gid)))
	}
	r := repoArgs{"-store", "local:" + store, "-password", "pw"}
	if res := runWith(t, o, r.with("init")...); res.code != 0 {
		t.Fatalf("init: %v", res)
	}
	res := runWith(t, o, r.with("backup", "-json", "-source", "local:"+src)...)
	wantCode(t, res, 3)
	var out backupOut
	decodeJSON(t, res, &out)
	if out.Errors != 2 || out.SnapshotID == "" {
		t.Errorf("backup -json: errors %d, snapshot %q; want 2 errors and a snapshot", out.Errors, out.SnapshotID)
	}
	// Honest counts: ok.txt alone is new; the paths of the errors are given.
	if want := []string{b.p("closed"), b.p("secret.txt")}; out.Summary["files_new"] != 1 || !slices.Equal(slices.Sorted(slices.Values(out.ErrorPaths)), want) {
		t.Errorf("backup -json: %v new files, error paths %q; want 1 (ok.txt) and %q", out.Summary["files_new"], out.ErrorPaths, want)
	}
	for _, name := range []string{"secret.txt", "closed"} {
		if !strings.Contains(res.stderr, name) {
			t.Errorf("stderr does not name %s:\n%v", name, res)
		}
	}
	dst := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", "-output", dst)...)
	if data, err := os.ReadFile(filepath.Join(dst, "ok.txt")); err != nil || string(data) != "readable\n" {
		t.Errorf("ok.txt: %q %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "secret.txt")); err == nil {
		t.Errorf("the unreadable file was restored (as what?)")
	}
}
