package backup_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// losingSource is the local file system until lostAfter calls of the
// faulty kind have been made; from then on every such call fails with
// source.ErrLost, as an SFTP source's calls do once its connection drops.
type losingSource struct {
	local.Source
	kind      string // "open" or "readdir"
	lostAfter int64
	calls     atomic.Int64
}

func (s *losingSource) lost(kind string) error {
	if kind == s.kind && s.calls.Add(1) > s.lostAfter {
		return fmt.Errorf("%s: %w", kind, source.ErrLost)
	}
	return nil
}

func (s *losingSource) Open(ctx context.Context, path string) (source.File, error) {
	if err := s.lost("open"); err != nil {
		return nil, err
	}
	return s.Source.Open(ctx, path)
}

func (s *losingSource) ReadDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	if err := s.lost("readdir"); err != nil {
		return nil, err
	}
	return s.Source.ReadDir(ctx, path)
}

// TestSourceLostWritesNoSnapshot: a source lost in the middle of a backup
// (while files are read, or while directories are listed) fails the run
// with source.ErrLost and writes no snapshot, where an unreadable file
// only adds an error to a snapshot that is written.
func TestSourceLostWritesNoSnapshot(t *testing.T) {
	root := t.TempDir()
	for d := range 4 {
		dir := filepath.Join(root, fmt.Sprintf("d%d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", f)), []byte(fmt.Sprint(d, f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		kind      string
		lostAfter int64
	}{{"open", 5}, {"readdir", 2}}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			ctx := context.Background()
			st := checktest.NewRepo(t, t.TempDir())
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			src := &losingSource{kind: tt.kind, lostAfter: tt.lostAfter}
			_, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Path: root, Source: src, Hostname: "test", Workers: 2})
			if !errors.Is(err, source.ErrLost) {
				t.Fatalf("backup.Run = %v, want source.ErrLost", err)
			}
			snaps, _, err := r.Snapshots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(snaps) != 0 {
				t.Errorf("%d snapshots written after the source was lost", len(snaps))
			}
		})
	}
}
