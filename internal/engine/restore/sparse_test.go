//go:build unix

package restore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

// allocated is the disk space of path (stat's blocks, as du counts it).
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// TestRestoreSparse restores a file of 100 KiB of data, 4 MiB of zeros,
// 100 KiB of data and 1 MiB of zeros at its end: by default the zero runs
// become holes (du counts under 1 MiB), with NoSparse they are written;
// the content is the same.
func TestRestoreSparse(t *testing.T) {
	t.Parallel()
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(probe, 8<<20); err != nil {
		t.Fatal(err)
	}
	if allocated(t, probe) >= 8<<20 {
		t.Skip("the temporary directory's file system has no holes")
	}
	src := t.TempDir()
	data := make([]byte, 100<<10)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	var content []byte
	content = append(content, data...)
	content = append(content, make([]byte, 4<<20)...)
	content = append(content, data...)
	content = append(content, make([]byte, 1<<20)...)
	if err := os.WriteFile(filepath.Join(src, "disk.img"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	sid := checktest.Backup(t, st, src)
	for _, noSparse := range []bool{false, true} {
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(context.Background()); err != nil {
			t.Fatal(err)
		}
		s, err := r.LoadSnapshot(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		opts := restore.Options{Output: out, NoSparse: noSparse, Verify: true}
		if _, err := restore.Run(context.Background(), r, checktest.Lease(t, st), s.Tree, opts); err != nil {
			t.Fatal(err)
		}
		wantSame(t, filepath.Join(src, "disk.img"), filepath.Join(out, "disk.img"))
		used := allocated(t, filepath.Join(out, "disk.img"))
		if sparse := used < 1<<20; sparse == noSparse {
			t.Errorf("NoSparse %v: %d bytes allocated for %d bytes of content", noSparse, used, len(content))
		}
	}
}

// cancelOnRead is a store that, on the second data read, checks the output
// holds no partly written file under a snapshot name, then cancels the
// restore (Ctrl-C in the middle of writing big.bin's chunks).
type cancelOnRead struct {
	store.Store
	t      *testing.T
	f      *fixture
	out    string
	cancel context.CancelFunc
	mu     sync.Mutex
	reads  int
}

func (c *cancelOnRead) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if strings.HasPrefix(key, repo.DataPrefix) {
		c.mu.Lock()
		c.reads++
		now := c.reads
		c.mu.Unlock()
		if now == 2 {
			for _, rel := range c.f.files {
				got, err := os.ReadFile(filepath.Join(c.out, rel))
				want, _ := os.ReadFile(filepath.Join(c.f.src, rel))
				if err == nil && string(got) != string(want) {
					c.t.Errorf("%s is partly written (%d of %d bytes) under its own name", rel, len(got), len(want))
				}
			}
			c.cancel()
			return nil, ctx.Err()
		}
	}
	return c.Store.GetRange(ctx, key, off, n)
}

// TestRestoreInterruptedMidFile cancels a restore while files are being
// written: no file is ever visible partly written under its name, the
// files that are there are complete, and no temporary file is left.
func TestRestoreInterruptedMidFile(t *testing.T) {
	t.Parallel()
	f := &fixture{dir: t.TempDir(), src: t.TempDir(), files: []string{"big.bin", "small.txt"}}
	f.st = checktest.NewRepo(t, f.dir)
	checktest.WriteFile(t, f.src, "big.bin", 1, 8<<20)
	checktest.WriteFile(t, f.src, "small.txt", 2, 100)
	f.sid = checktest.Backup(t, f.st, f.src)
	if n := len(f.node(t, "big.bin").Content); n < 3 {
		t.Fatalf("big.bin has %d chunks: the test needs it cut while being written", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	st := &cancelOnRead{Store: f.st, t: t, f: f, out: out, cancel: cancel}
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, f.sid)
	if err != nil {
		t.Fatal(err)
	}
	_, err = restore.Run(ctx, r, checktest.Lease(t, st), s.Tree, restore.Options{Output: out, Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("restore: %v, want the cancellation", err)
	}
	for _, rel := range f.files {
		if _, err := os.Stat(filepath.Join(out, rel)); err == nil {
			wantSame(t, filepath.Join(f.src, rel), filepath.Join(out, rel))
		}
	}
	wantNoTemp(t, out)
}
