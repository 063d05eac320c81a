package backup_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// refusingSource is the local file system, except that opening the file
// at refuse fails with permission denied (what a file of mode 000 gives a
// user other than root).
type refusingSource struct {
	local.Source
	refuse string
}

func (s *refusingSource) Open(ctx context.Context, path string) (source.File, error) {
	if path == s.refuse {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
	}
	return s.Source.Open(ctx, path)
}

// TestUnreadableNotCounted: a file that cannot be read is an error, not a
// new (or changed) file of the summary, which counts what was stored.
func TestUnreadableNotCounted(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"ok.txt", "secret.txt"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	st := checktest.NewRepo(t, t.TempDir())
	secret := filepath.Join(root, "secret.txt")
	var earlier []snapshot.WithID
	run := func() *backup.Result {
		t.Helper()
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := backup.Run(ctx, checktest.Writer(t, st, r), snapshot.Heads(earlier),
			backup.Options{Path: root, Source: &refusingSource{refuse: secret}, Hostname: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) != 1 || !errors.Is(res.Errors[0], fs.ErrPermission) {
			t.Fatalf("errors %v, want secret.txt's permission denied", res.Errors)
		}
		earlier = append(earlier, snapshot.WithID{ID: res.ID, Snapshot: res.Snapshot})
		return res
	}
	if s := run().Snapshot.Summary; s.FilesNew != 1 || s.FilesChanged != 0 || s.Errors != 1 {
		t.Errorf("first backup: %d new, %d changed, %d errors; want 1 new (ok.txt), 0 changed, 1 error", s.FilesNew, s.FilesChanged, s.Errors)
	}
	// secret.txt is still not in the parent: it is tried again, and is
	// still neither new nor changed.
	if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("changed, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := run().Snapshot.Summary; s.FilesNew != 0 || s.FilesChanged != 1 || s.Errors != 1 {
		t.Errorf("second backup: %d new, %d changed, %d errors; want 0 new, 1 changed (ok.txt), 1 error", s.FilesNew, s.FilesChanged, s.Errors)
	}
}
