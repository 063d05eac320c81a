package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestSeveralRoots backs up two directories and a file of one tree as one
// snapshot: each is stored under its absolute path, the directories on the
// way hold nothing else, a root inside another is stored once, and the
// next backup of the same roots has it as its parent and reads nothing
// again, while a backup of other roots does not.
func TestSeveralRoots(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("several roots are refused on Windows (TestSeveralRootsRefusedOnWindows)")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"a/f1", "a/d/g", "b/h", "b/other", "c/no"}
	for _, f := range files {
		p := filepath.Join(base, f)
		mkdirAll(t, filepath.Dir(p))
		write(t, p, f)
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{filepath.Join(base, "b", "h"), filepath.Join(base, "a"), filepath.Join(base, "a", "d")}
	st := checktest.NewRepo(t, t.TempDir())
	first := runRoots(t, st, paths, nil)
	wantPaths := []string{filepath.Join(base, "a"), filepath.Join(base, "b", "h")}
	if s := first.Snapshot; !slices.Equal(s.Paths, wantPaths) || s.Path != "/" || s.Source != "local:/" {
		t.Errorf("snapshot path %q source %q paths %q, want / local:/ %q", s.Path, s.Source, s.Paths, wantPaths)
	}
	out := restoreSnapshot(t, st, first)
	for _, f := range []string{"a/f1", "a/d/g", "b/h"} {
		if got, err := os.ReadFile(filepath.Join(out, base, f)); err != nil || string(got) != f {
			t.Errorf("%s restored as %q, %v", f, got, err)
		}
	}
	for _, f := range []string{"b/other", "c"} {
		if _, err := os.Lstat(filepath.Join(out, base, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, not a root, was stored (%v)", f, err)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(out, base)); err != nil || len(entries) != 2 {
		t.Errorf("%s holds %v (%v), want a and b", base, entries, err)
	}

	again := runRoots(t, st, []string{filepath.Join(base, "a"), filepath.Join(base, "b", "h")}, []*backup.Result{first})
	if again.Parent == nil || again.Parent.ID != first.ID {
		t.Errorf("same roots: parent %v, want %s", again.Parent, first.ID.Short())
	}
	if s := again.Snapshot.Summary; s.BytesRead != 0 || s.FilesUnmodified != 3 || s.FilesNew+s.FilesChanged != 0 {
		t.Errorf("same roots again: %+v, want 3 unmodified files and nothing read", s)
	}
	other := runRoots(t, st, []string{filepath.Join(base, "a")}, []*backup.Result{first, again})
	if other.Parent != nil {
		t.Errorf("other roots got parent %s", other.Parent.ID.Short())
	}
	if _, err := backup.DryRun(context.Background(), checktest.Open(t, st), nil,
		backup.Options{Paths: []string{filepath.Join(base, "missing")}, DryRun: true}); !errors.Is(err, backup.ErrSource) {
		t.Errorf("missing root: %v, want ErrSource", err)
	}
}

// TestSeveralRootsRefusedOnWindows: on Windows, several roots are refused
// with ErrManyRootsWindows before anything is read or written.
func TestSeveralRootsRefusedOnWindows(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("several roots are refused on Windows only")
	}
	base := t.TempDir()
	mkdirAll(t, filepath.Join(base, "a"))
	mkdirAll(t, filepath.Join(base, "b"))
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	opts := backup.Options{Paths: []string{filepath.Join(base, "a"), filepath.Join(base, "b")}, Hostname: "test", Workers: 2}
	_, err := backup.Run(context.Background(), checktest.Writer(t, st, r), nil, opts)
	if !errors.Is(err, backup.ErrSource) || !errors.Is(err, backup.ErrManyRootsWindows) {
		t.Errorf("several roots on Windows: %v, want ErrSource and ErrManyRootsWindows", err)
	}
	if _, err := backup.Recorded(context.Background(), opts); !errors.Is(err, backup.ErrManyRootsWindows) {
		t.Errorf("Recorded of several roots on Windows: %v, want ErrManyRootsWindows", err)
	}
}

// runRoots backs up paths as several roots, with the snapshots of
// earlier as the repository's.
func runRoots(t *testing.T, st store.Store, paths []string, earlier []*backup.Result) *backup.Result {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var snaps []snapshot.WithID
	for _, e := range earlier {
		snaps = append(snaps, snapshot.WithID{ID: e.ID, Snapshot: e.Snapshot})
	}
	// A minute ahead: the tree's change times (now) have settled.
	at := clock.NewFake(time.Now().Add(time.Minute + time.Duration(len(earlier))*time.Second))
	res, err := backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(snaps), backup.Options{Paths: paths, Hostname: "test", Workers: 2, Clock: at})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	return res
}

func mkdirAll(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
