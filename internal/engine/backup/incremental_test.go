package backup_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestIncrementalEqualsFull changes a backed-up tree in one way, backs it up
// again with the first snapshot as parent, and requires the same root tree
// as a backup of the changed tree without a parent: what an incremental
// backup reuses from its parent (file contents, whole directory trees) must
// never hide a change.
func TestIncrementalEqualsFull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, src string)
		same   bool // the root tree stays the parent's
		// unix: Windows cannot make this change (no mode bits on a
		// directory; symbolic links only where they can be made).
		unix bool
	}{
		{"nothing", func(*testing.T, string) {}, true, false},
		// Read-only: the one mode change Windows has.
		{"mode of a deep file", func(t *testing.T, src string) { chmod(t, filepath.Join(src, "a/b/f1"), 0o444) }, false, false},
		{"mtime of a deep file", func(t *testing.T, src string) {
			when := time.Unix(1_600_000_000, 0)
			if err := os.Chtimes(filepath.Join(src, "a/b/f1"), when, when); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"content, same size", func(t *testing.T, src string) { write(t, filepath.Join(src, "a/b/f1"), "CONTENT 1") }, false, false},
		{"new file", func(t *testing.T, src string) { write(t, filepath.Join(src, "a/new"), "new") }, false, false},
		{"removed file", func(t *testing.T, src string) { remove(t, filepath.Join(src, "a/b/f2")) }, false, false},
		{"new empty directory", func(t *testing.T, src string) { mkdir(t, filepath.Join(src, "c/d")) }, false, false},
		{"mode of a directory", func(t *testing.T, src string) { chmod(t, filepath.Join(src, "c"), 0o700) }, false, true},
		{"symlink target", func(t *testing.T, src string) {
			remove(t, filepath.Join(src, "a/link"))
			if err := os.Symlink("elsewhere", filepath.Join(src, "a/link")); err != nil {
				t.Fatal(err)
			}
		}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unix && runtime.GOOS == "windows" {
				t.Skip("Windows cannot make this change: a directory has no mode bits, and symbolic links need Developer Mode or elevation")
			}
			t.Parallel()
			src := t.TempDir()
			mkdir(t, filepath.Join(src, "a/b"))
			mkdir(t, filepath.Join(src, "c"))
			write(t, filepath.Join(src, "a/b/f1"), "content 1")
			write(t, filepath.Join(src, "a/b/f2"), "content 2")
			write(t, filepath.Join(src, "c/f3"), "content 3")
			if runtime.GOOS != "windows" {
				if err := os.Symlink("target", filepath.Join(src, "a/link")); err != nil {
					t.Fatal(err)
				}
			}
			st := checktest.NewRepo(t, t.TempDir())
			// The first backup "begins" an hour after the files were
			// written, so that the second trusts what it recorded.
			first := backupOf(t, st, src, nil, time.Now().Add(time.Hour))
			tc.change(t, src)
			incremental := backupOf(t, st, src, first, time.Now().Add(2*time.Hour))
			// Blob ids are keyed per repository: the full backup goes
			// into the same one.
			full := backupOf(t, st, src, nil, time.Now().Add(2*time.Hour))
			if incremental.Snapshot.Tree != full.Snapshot.Tree {
				t.Errorf("incremental backup's tree %s differs from a full backup's %s", incremental.Snapshot.Tree.Short(), full.Snapshot.Tree.Short())
			}
			if got := incremental.Snapshot.Tree == first.Snapshot.Tree; got != tc.same {
				t.Errorf("root tree unchanged = %v, want %v", got, tc.same)
			}
		})
	}
}

// TestRacyEntriesReadAgain: a file changed less than the racy margin before
// the parent backup began is read again (its timestamps may not have moved
// since that backup read it), one changed earlier is not. The margin is
// twice the step of the file system's timestamps (at least the kernel's
// 10 ms tick) where they have sub-second parts, and 2 s where every
// timestamp of the root is a whole second (FAT, archives).
func TestRacyEntriesReadAgain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		wholeSeconds bool          // the root's mtimes are whole seconds
		parentAge    time.Duration // how long after the last change the parent backup began
		wantRead     bool
	}{
		{"changed as the parent began", false, 0, true},
		{"changed one tick before the parent", false, 10 * time.Millisecond, true},
		{"changed 100 ms before the parent", false, 100 * time.Millisecond, false},
		{"changed long before the parent", false, time.Hour, false},
		{"whole seconds, changed 1 s before the parent", true, time.Second, true},
		{"whole seconds, changed 3 s before the parent", true, 3 * time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			f := filepath.Join(src, "f")
			write(t, f, "content")
			if tc.wholeSeconds {
				whole := time.Now().Truncate(time.Second).Add(-time.Minute)
				for _, p := range []string{f, src} {
					if err := os.Chtimes(p, whole, whole); err != nil {
						t.Fatal(err)
					}
				}
			}
			changed := lastChange(t, f)
			st := checktest.NewRepo(t, t.TempDir())
			first := backupOf(t, st, src, nil, changed.Add(tc.parentAge))
			second := backupOf(t, st, src, first, changed.Add(tc.parentAge+time.Hour))
			if read := second.Snapshot.Summary.BytesRead > 0; read != tc.wantRead {
				t.Errorf("file read again = %v (summary %+v), want %v", read, second.Snapshot.Summary, tc.wantRead)
			}
			if sum := second.Snapshot.Summary; sum.FilesUnmodified != 1 || sum.FilesChanged != 0 {
				t.Errorf("summary %+v: want the file counted unmodified (read again or not)", sum)
			}
			if second.Snapshot.Tree != first.Snapshot.Tree {
				t.Errorf("tree changed from %s to %s though the file did not", first.Snapshot.Tree.Short(), second.Snapshot.Tree.Short())
			}
		})
	}
}

// lastChange is the later of path's mtime and ctime.
func lastChange(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if ctime := changeTime(t, path); ctime.After(fi.ModTime()) {
		return ctime
	}
	return fi.ModTime()
}

// backupOf backs up src into st with parent's snapshot as the parent (none
// if nil), as a backup beginning at start.
func backupOf(t *testing.T, st store.Store, src string, parent *backup.Result, start time.Time) *backup.Result {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var snaps []snapshot.WithID
	if parent != nil {
		snaps = []snapshot.WithID{{ID: parent.ID, Snapshot: parent.Snapshot}}
	}
	res, err := backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(snaps), backup.Options{Path: src, Hostname: "test", Workers: 2, Clock: clock.NewFake(start)})
	if err != nil {
		t.Fatal(err)
	}
	if parent != nil && (res.Parent == nil || res.Parent.ID != parent.ID) {
		t.Fatalf("backup used parent %v, want %s", res.Parent, parent.ID.Short())
	}
	return res
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
