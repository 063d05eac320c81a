//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restoreOut is restore -json.
type restoreOut struct {
	Files        int64    `json:"files"`
	Replaced     int64    `json:"replaced"`
	Unchanged    int64    `json:"unchanged"`
	Deleted      int64    `json:"deleted"`
	Verified     int64    `json:"verified"`
	VerifyFailed []string `json:"verify_failed"`
	Skipped      []string `json:"skipped"`
}

// outputFiles lists the regular files below dir, slash-separated, sorted.
func outputFiles(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestRestoreFlags runs restore's -include/-exclude, -overwrite if-changed,
// -delete, -verify and -sparse on a real tree, on the local store and the
// S3 server: what is written, rewritten, deleted and verified, byte for
// byte, and the disk space of a file with a 3 MiB run of zeros.
func TestRestoreFlags(t *testing.T) {
	t.Parallel()
	zeros := "head" + strings.Repeat("\x00", 3<<20) + "tail"
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := writeTree(t, map[string]string{"docs/a.txt": "alpha", "docs/b.pdf": "pdf", "cache/c.txt": "cached",
				"top.txt": "top", "disk.img": zeros})
			mustRun(t, r.with("backup", "-source", "local:"+src)...)
			out := filepath.Join(t.TempDir(), "out")

			var res restoreOut
			decodeJSON(t, mustRun(t, r.with("restore", "-json", "-output", out, "-include", "*.txt", "-exclude", "cache/")...), &res)
			if got := strings.Join(outputFiles(t, out), ","); got != "docs/a.txt,top.txt" || res.Files != 2 {
				t.Fatalf("-include *.txt -exclude cache/ restored %q (%d files)", got, res.Files)
			}

			decodeJSON(t, mustRun(t, r.with("restore", "-json", "-output", out)...), &res)
			if res.Files != 3 || len(res.Skipped) != 2 {
				t.Errorf("second restore (never overwrite): %+v, want 3 new files and 2 skipped", res)
			}
			if err := os.WriteFile(filepath.Join(out, "top.txt"), []byte("changed on disk"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "docs", "extra.txt"), []byte("not in the snapshot"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Unix(1e9, 0)
			if err := os.Chtimes(filepath.Join(out, "docs/a.txt"), old, old); err != nil {
				t.Fatal(err)
			}
			dry := mustRun(t, r.with("restore", "-dry-run", "-output", out, "-delete")...).stdout
			if !strings.Contains(dry, "would delete docs/extra.txt\n1 entries not in the snapshot would be deleted") {
				t.Errorf("restore -dry-run -delete does not name what it would delete:\n%s", dry)
			}
			if _, err := os.Stat(filepath.Join(out, "docs", "extra.txt")); err != nil {
				t.Errorf("the dry run deleted: %v", err)
			}
			decodeJSON(t, mustRun(t, r.with("restore", "-json", "-output", out, "-overwrite", "if-changed", "-delete", "-verify")...), &res)
			if res.Files != 2 || res.Replaced != 2 || res.Unchanged != 3 || res.Deleted != 1 || res.Verified != 2 || len(res.VerifyFailed) != 0 {
				t.Errorf("-overwrite if-changed -delete -verify: %+v, want 2 files rewritten, 3 unchanged, 1 deleted, 2 verified", res)
			}
			res = restoreOut{}
			decodeJSON(t, mustRun(t, r.with("restore", "-json", "-output", out, "-overwrite", "if-changed")...), &res)
			if res.Files != 0 || res.Unchanged != 5 {
				t.Errorf("restore over an identical tree: %+v, want nothing rewritten", res)
			}
			if o, err := exec.Command("diff", "-r", src, out).CombinedOutput(); err != nil {
				t.Errorf("diff -r source output: %v\n%s", err, o)
			}

			dense := filepath.Join(t.TempDir(), "dense")
			mustRunCmd(t, r.with("restore", "-output", dense, "-path", "disk.img", "-sparse=false")...)
			sparseBlocks, denseBlocks := blocks(t, filepath.Join(out, "disk.img")), blocks(t, filepath.Join(dense, "disk.img"))
			if sparseBlocks*512 >= 1<<20 || denseBlocks*512 < 3<<20 {
				t.Errorf("disk.img: %d bytes allocated with -sparse, %d without; want under 1 MiB and over 3 MiB", sparseBlocks*512, denseBlocks*512)
			}
		})
	}
}

// mustRunCmd is mustRun, for readability where the output is not used.
func mustRunCmd(t *testing.T, args ...string) {
	t.Helper()
	mustRun(t, args...)
}

func blocks(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks
}

// TestRestoreFlagErrors: bad combinations exit 2 with one line naming the
// flag, before opening the repository.
func TestRestoreFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"delete with include", []string{"-delete", "-include", "*.txt"}, "-delete"},
		{"unknown overwrite mode", []string{"-overwrite", "sometimes"}, "-overwrite"},
		{"verify into a zip", []string{"-verify", "-output", "x.zip"}, "-verify"},
		{"comment as a pattern", []string{"-exclude", "#x"}, "-exclude"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, append([]string{"restore", "-store", "local:" + t.TempDir()}, tc.args...)...)
			wantCode(t, res, 2)
			wantOneLineError(t, res, tc.want)
		})
	}
	help := mustRun(t, "help", "restore")
	for _, flag := range []string{"-include", "-exclude", "-overwrite", "-delete", "-verify", "-sparse"} {
		if !strings.Contains(help.stdout+help.stderr, flag) {
			t.Errorf("help restore does not describe %s", flag)
		}
	}
}
