package backup_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// endlessSource is the local file system with one directory, root, made
// endless: root holds the directory "d" and every root/d/.../d is that
// same directory again, as a file system reached through openat (which
// PATH_MAX does not limit) or a FUSE file system can present. Beyond
// twice the depth limit it refuses to list, so that a backup without the
// limit ends (its snapshot then breaks the bounds) instead of running the
// machine out of memory.
type endlessSource struct {
	local.Source
	root string
}

// real maps a path of the endless chain to the directory it is: root
// itself, or root/d for any deeper one. It returns the depth too.
func (s *endlessSource) real(path string) (string, int) {
	rest, ok := strings.CutPrefix(path, s.root)
	if !ok || rest == "" {
		return path, 0
	}
	depth := strings.Count(rest, "/")
	return filepath.Join(s.root, "d"), depth
}

func (s *endlessSource) ReadDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	if _, depth := s.real(path); depth > 2*tree.MaxDepth {
		return nil, fmt.Errorf("%s: deeper than the test allows", path)
	}
	rest, _ := strings.CutPrefix(path, s.root)
	if rest == "" {
		return s.Source.ReadDir(ctx, path)
	}
	return s.Source.ReadDir(ctx, s.root) // holds "d" again
}

func (s *endlessSource) Lstat(ctx context.Context, path string) (fs.FileInfo, error) {
	p, _ := s.real(path)
	return s.Source.Lstat(ctx, p)
}

func (s *endlessSource) Xattrs(ctx context.Context, path string) ([]source.Xattr, error) {
	p, _ := s.real(path)
	return s.Source.Xattrs(ctx, p)
}

func (s *endlessSource) Flags(ctx context.Context, path string) (uint32, error) {
	p, _ := s.real(path)
	return s.Source.Flags(ctx, p)
}

// TestEndlessSourceDepth backs up a directory nested without end: the
// directory at depth tree.MaxDepth is stored empty and reported, once, with
// the depth error, so the snapshot is one every reader accepts.
func TestEndlessSourceDepth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not a timed assertion
	defer cancel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Path: root, Source: &endlessSource{root: root},
		Hostname: "test", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || !errors.Is(res.Errors[0], tree.ErrTooDeep) {
		t.Fatalf("errors %v, want one depth error", res.Errors)
	}
	dirs := 0
	err = treewalk.Walk(ctx, r, res.Snapshot.Tree, "", func(string, *tree.Node) error {
		dirs++
		return nil
	})
	if err != nil || dirs != tree.MaxDepth {
		t.Errorf("walking the snapshot: %v, %d directories; want %d", err, dirs, tree.MaxDepth)
	}
}
