//go:build unix

package fsmeta

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestWriterManyDirectories creates files in several times maxOpenDirs
// directories from concurrent goroutines, in an order that revisits
// directories after they may have been closed: every file is created, and
// no more than maxOpenDirs directories stay open between calls.
func TestWriterManyDirectories(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	w, err := NewWriter(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const dirs, perDir, workers = 3 * maxOpenDirs, 4, 8
	for d := range dirs {
		if err := w.Mkdir(fmt.Sprintf("d%03d", d), &tree.Node{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, dirs*perDir)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Round-robin over the directories: each goroutine comes back
			// to a directory after all the others, long after it was last
			// used.
			for i := g; i < dirs*perDir; i += workers {
				rel := fmt.Sprintf("d%03d/f%d", i%dirs, i/dirs)
				f, err := w.CreateFile(rel, &tree.Node{})
				if err != nil {
					errs <- err
					continue
				}
				if _, err := f.WriteString(rel); err != nil {
					errs <- err
				}
				if err := f.Close(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(w.dirs.open); n > maxOpenDirs {
		t.Errorf("%d directories open after the calls, want at most %d", n, maxOpenDirs)
	}
	for i := range dirs * perDir {
		rel := fmt.Sprintf("d%03d/f%d", i%dirs, i/dirs)
		if data, err := os.ReadFile(filepath.Join(out, rel)); err != nil || string(data) != rel {
			t.Fatalf("%s: %q, %v", rel, data, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(w.dirs.open); n != 0 {
		t.Errorf("%d directories still open after Close", n)
	}
}
