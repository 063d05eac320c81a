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
	fd, err := unix.Open(filepath.Join(dir, "ids", h.Deep.ID.String()[:8]), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	depth := 0
	for {
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
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
