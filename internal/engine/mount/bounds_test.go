//go:build !windows

package mount_test

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/engine/mount"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestDeepMount goes down the 100,000-level snapshot one directory at a
// time, relative to the last (openat: PATH_MAX does not stop it, and the
// mount holds each directory's path): the directories to depth
// tree.MaxDepth open, the next does not, with a warning naming the
// depth error.
func TestDeepMount(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	var warned atomic.Int32
	warnf := func(format string, args ...any) {
		for _, a := range args {
			if err, ok := a.(error); ok && errors.Is(err, tree.ErrTooDeep) {
				warned.Add(1)
			}
		}
	}
	dir := serve(t, r, mount.Options{Warnf: warnf})
	fd, err := openatRetrying(unix.AT_FDCWD, filepath.Join(dir, "ids", h.Deep.ID.String()[:8]))
	must(t, err)
	depth := 0
	for {
		next, err := openatRetrying(fd, "d")
		must(t, unix.Close(fd))
		if err != nil {
			if !errors.Is(err, unix.EIO) {
				t.Errorf("at depth %d: %v, want EIO", depth, err)
			}
			break
		}
		fd, depth = next, depth+1
		if depth > tree.MaxDepth {
			must(t, unix.Close(fd))
			t.Fatalf("opened a directory at depth %d", depth)
		}
	}
	if depth != tree.MaxDepth || warned.Load() == 0 {
		t.Errorf("stopped at depth %d with %d warnings, want %d and a warning of the depth error", depth, warned.Load(), tree.MaxDepth)
	}
}

// openatRetrying opens dir/name as a directory, trying again when a
// signal interrupts the call: the Go runtime preempts goroutines with
// signals, and a FUSE request in flight is then answered with EINTR.
// The raw unix call does not retry as the os package does.
func openatRetrying(dir int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}
