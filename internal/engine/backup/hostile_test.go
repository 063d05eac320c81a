package backup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/store"
)

// run backs up src into st while during runs next to it, started as soon as
// ready reports true for the backup's progress, and returns the result.
func run(t *testing.T, st store.Store, src string, ready func(p *backup.Progress) bool, during func(p *backup.Progress)) (*backup.Result, []string, error) {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warnings []string
	p := &backup.Progress{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	if during != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !ready(p) {
				select {
				case <-done:
					return
				default:
				}
			}
			during(p)
		}()
	}
	res, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Path: src, Hostname: "test", Workers: 2, Progress: p,
		Warnf: func(format string, args ...any) {
			mu.Lock()
			warnings = append(warnings, fmt.Sprintf(format, args...))
			mu.Unlock()
		}})
	close(done)
	wg.Wait()
	return res, warnings, err
}

// restoreSnapshot restores a backup's snapshot and returns the directory.
func restoreSnapshot(t *testing.T, st store.Store, res *backup.Result) string {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := restore.Run(ctx, r, checktest.Lease(t, st), res.Snapshot.Tree, restore.Options{Output: out}); err != nil {
		t.Fatalf("restoring what the backup stored: %v", err)
	}
	return out
}

// TestBackupNonUTF8Names backs up names that are not valid UTF-8 and
// restores them byte for byte.
func TestBackupNonUTF8Names(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows names are UTF-16: no file can be named by bytes that are not UTF-8")
	}
	t.Parallel()
	src := t.TempDir()
	names := []string{"latin1-\xe9t\xe9", "\xff\xfe", "ok-\xc3\x28", "dir-\x80"}
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(src, n), []byte(fmt.Sprint("content ", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("target-\xfe", filepath.Join(src, "link-\xfd")); err != nil {
		t.Fatal(err)
	}
	st := checktest.NewRepo(t, t.TempDir())
	res, _, err := run(t, st, src, nil, nil)
	if err != nil || len(res.Errors) > 0 {
		t.Fatalf("backup: %v %v", err, res)
	}
	out := restoreSnapshot(t, st, res)
	for i, n := range names {
		if data, err := os.ReadFile(filepath.Join(out, n)); err != nil || string(data) != fmt.Sprint("content ", i) {
			t.Errorf("%q: %q %v", n, data, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(out, "link-\xfd")); err != nil || target != "target-\xfe" {
		t.Errorf("symlink: %q %v", target, err)
	}
}

// TestBackupFileShrinks truncates a large file while the backup reads it:
// the backup succeeds, stores a prefix of the original consistent with the
// recorded size (with a warning when the size changed), and the snapshot
// restores without error.
func TestBackupFileShrinks(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	checktest.WriteFile(t, src, "big", 7, 24<<20)
	orig, err := os.ReadFile(filepath.Join(src, "big"))
	if err != nil {
		t.Fatal(err)
	}
	st := checktest.NewRepo(t, t.TempDir())
	// Only once bytes were read: a file truncated before the walk's lstat is
	// simply a small file, and rightly gives no warning.
	bytesRead := func(p *backup.Progress) bool { return p.Bytes.Load() > 0 }
	res, warnings, err := run(t, st, src, bytesRead, func(*backup.Progress) {
		if err := os.Truncate(filepath.Join(src, "big"), 1<<20); err != nil {
			t.Error(err)
		}
	})
	if err != nil || len(res.Errors) > 0 {
		t.Fatalf("backup: %v %+v", err, res)
	}
	got, err := os.ReadFile(filepath.Join(restoreSnapshot(t, st, res), "big"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, orig[:len(got)]) {
		t.Fatalf("restored %d bytes are not a prefix of the original", len(got))
	}
	if len(got) != len(orig) && len(warnings) == 0 {
		t.Errorf("stored %d of %d bytes without a warning", len(got), len(orig))
	}
	t.Logf("stored %d of %d bytes; warnings %q", len(got), len(orig), warnings)
}

// TestBackupSourceVanishes removes most of the source while the backup
// walks it: no panic, a snapshot of what could be read (or ErrSource if the
// root itself went), and that snapshot restores without error.
func TestBackupSourceVanishes(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for d := 0; d < 40; d++ {
		for f := 0; f < 5; f++ {
			checktest.WriteFile(t, src, fmt.Sprintf("d%02d/sub/f%d", d, f), uint64(d*10+f), 20<<10)
		}
	}
	st := checktest.NewRepo(t, t.TempDir())
	first := checktest.Backup(t, st, src)
	started := func(p *backup.Progress) bool { return p.Bytes.Load() > 0 || p.Dirs.Load() > 0 }
	res, _, err := run(t, st, src, started, func(*backup.Progress) {
		for d := 39; d >= 0; d-- {
			err := os.RemoveAll(filepath.Join(src, fmt.Sprintf("d%02d", d)))
			switch {
			case err != nil && runtime.GOOS == "windows":
				// Windows refuses to remove a file the backup holds open
				// (Go opens files without FILE_SHARE_DELETE): the rest goes.
				t.Logf("not all removed: %v", err)
			case err != nil:
				t.Error(err)
			}
		}
	})
	if err != nil {
		if !errors.Is(err, backup.ErrSource) {
			t.Fatalf("backup: %v, want success or ErrSource", err)
		}
	} else {
		t.Logf("backup saved with %d errors", len(res.Errors))
		restoreSnapshot(t, st, res)
	}
	// Nothing already stored was lost.
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Run(context.Background(), r, checktest.Lease(t, st), s.Tree, restore.Options{Output: t.TempDir()}); err != nil {
		t.Fatalf("the earlier snapshot no longer restores: %v", err)
	}
}
