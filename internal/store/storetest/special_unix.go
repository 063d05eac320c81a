//go:build unix

package storetest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// RunSpecialFiles checks a file system store (whose root is dir on this
// machine) against what an attacker with write access to the directory
// plants where objects should be: a symbolic link to /dev/zero (whose
// reading never ends), a FIFO (whose opening waits for a writer), a
// symbolic link to a regular file (whose target is outside the store).
// Get and Stat must refuse each at once with store.ErrNotRegular (and
// ReadRange and OpenRange too when ranges is set), and Delete must remove it.
func RunSpecialFiles(t *testing.T, st store.Store, dir string, ranges bool) {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("a file outside the store"), 0o644); err != nil {
		t.Fatal(err)
	}
	plants := []struct {
		name  string
		plant func(p string) error
	}{
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o666) }},
		{"symlink to a file", func(p string) error { return os.Symlink(outside, p) }},
	}
	for i, pl := range plants {
		t.Run(pl.name, func(t *testing.T) {
			key := "special/" + string(rune('a'+i))
			mustPut(t, st, "special/keep", []byte("x")) // makes the directory
			if err := pl.plant(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, st, key, ranges)
			if err := st.Delete(context.Background(), key); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(key))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("still there after Delete: %v", err)
			}
		})
	}
}

// checkRefused runs Get, Stat (and ReadRange) of key in a goroutine each,
// failing t unless each returns store.ErrNotRegular before the test's
// deadline (a FIFO opened for reading would block).
func checkRefused(t *testing.T, st store.Store, key string, ranges bool) {
	t.Helper()
	ctx := context.Background()
	ops := []struct {
		name string
		op   func() error
	}{
		{"Get", func() error { _, err := st.Get(ctx, key, 1<<20); return err }},
		{"Stat", func() error { _, err := st.Stat(ctx, key); return err }},
	}
	if ranges {
		ops = append(ops, struct {
			name string
			op   func() error
		}{"ReadRange", func() error { return store.ReadRangeInto(ctx, st, key, 0, make([]byte, 10)) }}, struct {
			name string
			op   func() error
		}{"OpenRange", func() error {
			_, err := readStream(ctx, st, key, 0, 10, func(r io.Reader) io.Reader { return r })
			return err
		}})
	}
	for _, o := range ops {
		done := make(chan error, 1)
		go func() { done <- o.op() }()
		deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
		select {
		case err := <-done:
			if !errors.Is(err, store.ErrNotRegular) {
				t.Errorf("%s: %v, want store.ErrNotRegular", o.name, err)
			}
		case <-deadline.Done():
			t.Errorf("%s did not return (blocked on the file?)", o.name)
		}
		cancel()
	}
}
