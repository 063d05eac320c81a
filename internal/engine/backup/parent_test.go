package backup_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// TestParentFromHeads: Run takes its parent from the heads it is given and
// loads only that snapshot; a head whose snapshot turns out to be of
// another group (a stale or forged list) fails the backup instead of
// comparing the source with another source's tree.
func TestParentFromHeads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	write(t, filepath.Join(src, "f"), "content")
	st := checktest.NewRepo(t, t.TempDir())
	run := func(host string, heads []snapshot.Head) (*backup.Result, error) {
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		return backup.Run(ctx, checktest.Writer(t, st, r), heads, backup.Options{Path: src, Hostname: host, Workers: 2})
	}
	first, err := run("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	head := snapshot.HeadOf(first.ID, first.Snapshot)
	other := *first.Snapshot
	other.Hostname = "b"
	forged := head
	forged.Group = other.Group()
	tests := []struct {
		name       string
		host       string
		heads      []snapshot.Head
		wantParent bool
		wantErr    error
	}{
		{"its group", "a", []snapshot.Head{head}, true, nil},
		{"another group", "b", []snapshot.Head{head}, false, nil},
		{"listed under the wrong group", "b", []snapshot.Head{forged}, false, repo.ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(tc.host, tc.heads)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Parent != nil && res.Parent.ID == first.ID; got != tc.wantParent {
				t.Errorf("parent %v, want the first snapshot: %v", res.Parent, tc.wantParent)
			}
		})
	}
}
