package backup_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/store"
)

// backupWith backs up src into a new repository with opts (Path, Hostname
// and Workers set here) and returns the result and the paths restored.
func backupWith(t *testing.T, src string, opts backup.Options) (*backup.Result, []string) {
	t.Helper()
	st := checktest.NewRepo(t, t.TempDir())
	res := runWith(t, st, src, opts)
	return res, restoredPaths(t, st, res)
}

func runWith(t *testing.T, st store.Store, src string, opts backup.Options) *backup.Result {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	opts.Path, opts.Hostname, opts.Workers = src, "test", 2
	res, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// restoredPaths restores res and lists what came back ("/" separated,
// directories with a trailing "/").
func restoredPaths(t *testing.T, st store.Store, res *backup.Result) []string {
	t.Helper()
	out := restoreSnapshot(t, st, res)
	var paths []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == out {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if d.IsDir() {
			rel += "/"
		}
		paths = append(paths, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestExcludedDirNotRead: an excluded directory costs no read of its own:
// of a node_modules with 300 subdirectories, not one is read, and nothing
// below it can be re-included.
func TestExcludedDirNotRead(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for i := range 300 {
		mkdir(t, filepath.Join(src, "app/node_modules", fmt.Sprintf("pkg%d", i)))
		write(t, filepath.Join(src, "app/node_modules", fmt.Sprintf("pkg%d", i), "keep.js"), "x")
	}
	mkdir(t, filepath.Join(src, "app/src"))
	write(t, filepath.Join(src, "app/src/main.js"), "main")
	write(t, filepath.Join(src, "app/debug.log"), "log")
	write(t, filepath.Join(src, "app/keep.log"), "log")
	p := &backup.Progress{}
	res, paths := backupWith(t, src, backup.Options{Progress: p,
		Excludes: []string{"# deps", "node_modules/", "*.log", "!keep.log", "!keep.js"}})
	want := []string{"app/", "app/keep.log", "app/src/", "app/src/main.js"}
	if !slices.Equal(paths, want) {
		t.Errorf("restored %q, want %q", paths, want)
	}
	// The source, app and app/src: nothing below node_modules.
	if got := p.Dirs.Load(); got != 3 {
		t.Errorf("%d directories read, want 3 (node_modules and its subdirectories must not be read)", got)
	}
	if ex := res.Snapshot.Excludes; ex == nil || !slices.Equal(ex.Patterns, []string{"node_modules/", "*.log", "!keep.log", "!keep.js"}) {
		t.Errorf("snapshot records excludes %+v, want the four patterns without the comment", ex)
	}
}

// TestExcludeRules covers -exclude-if-present, -exclude-caches and
// -exclude-larger-than through a whole backup and restore.
func TestExcludeRules(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	mkdir(t, filepath.Join(src, "private"))
	write(t, filepath.Join(src, "private/.nobackup"), "")
	write(t, filepath.Join(src, "private/secret"), "s")
	mkdir(t, filepath.Join(src, "cache"))
	write(t, filepath.Join(src, "cache", exclude.CacheDirTag), "Signature: 8a477f597d28d172789f06886806bc55\n")
	write(t, filepath.Join(src, "cache/blob"), "b")
	mkdir(t, filepath.Join(src, "fake"))
	write(t, filepath.Join(src, "fake", exclude.CacheDirTag), "Signature: 0000")
	write(t, filepath.Join(src, "big"), "0123456789abcdefghijk")
	write(t, filepath.Join(src, "small"), "0123456789abcdefghij")
	res, paths := backupWith(t, src, backup.Options{ExcludeIfPresent: []string{".nobackup"}, ExcludeCaches: true, ExcludeLargerThan: 20})
	want := []string{"fake/", "fake/CACHEDIR.TAG", "small"}
	if !slices.Equal(paths, want) {
		t.Errorf("restored %q, want %q", paths, want)
	}
	ex := res.Snapshot.Excludes
	if ex == nil || !slices.Equal(ex.IfPresent, []string{".nobackup"}) || !ex.Caches || ex.LargerThan != 20 || ex.OneFileSystem {
		t.Errorf("snapshot records excludes %+v", ex)
	}
	if res, _ := backupWith(t, src, backup.Options{}); res.Snapshot.Excludes != nil {
		t.Errorf("a backup without rules records %+v, want none", res.Snapshot.Excludes)
	}
}

// TestOneFileSystemBackup mounts a tmpfs inside the source: with
// OneFileSystem the mount point is stored empty and not read.
func TestOneFileSystemBackup(t *testing.T) {
	src := t.TempDir()
	mnt := filepath.Join(src, "mnt")
	mkdir(t, mnt)
	write(t, filepath.Join(src, "here"), "h")
	if out, err := exec.Command("mount", "-t", "tmpfs", "none", mnt).CombinedOutput(); err != nil {
		// Not root: the exclude package tests the rule on /proc instead.
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	mkdir(t, filepath.Join(mnt, "sub"))
	write(t, filepath.Join(mnt, "sub/there"), "t")
	for _, one := range []bool{false, true} {
		p := &backup.Progress{}
		res, paths := backupWith(t, src, backup.Options{OneFileSystem: one, Progress: p})
		want, dirs := []string{"here", "mnt/", "mnt/sub/", "mnt/sub/there"}, int64(3)
		if one {
			want, dirs = []string{"here", "mnt/"}, 1
		}
		if !slices.Equal(paths, want) || p.Dirs.Load() != dirs {
			t.Errorf("OneFileSystem=%v: restored %q reading %d directories, want %q reading %d", one, paths, p.Dirs.Load(), want, dirs)
		}
		if got := res.Snapshot.Excludes != nil && res.Snapshot.Excludes.OneFileSystem; got != one {
			t.Errorf("OneFileSystem=%v recorded as %v", one, got)
		}
	}
}

// TestBadExcludeRefused: a pattern git's syntax cannot read fails the run
// before anything is stored.
func TestBadExcludeRefused(t *testing.T) {
	t.Parallel()
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	_, err := backup.Run(context.Background(), checktest.Writer(t, st, r), nil, backup.Options{Path: t.TempDir(), Excludes: []string{"[oops"}})
	if !errors.Is(err, exclude.ErrPattern) {
		t.Fatalf("Run with pattern [oops = %v, want ErrPattern", err)
	}
}
