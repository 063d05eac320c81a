package rewrite_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/rewrite"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted rewrites the crafted snapshots (dry runs: the walk is what
// is bounded). The patterns decide by path, so a tree is walked once per
// path that reaches it: the snapshot shared 2^40 ways fails with the
// budget error, the one 100,000 levels deep with the depth error, each
// naming the snapshot; the twin directories, one tree, are rewritten path
// by path.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	tests := []struct {
		name    string
		snap    snapshot.WithID
		exclude string
		want    error
		removed []string
	}{
		{"deep", h.Deep, "f", tree.ErrTooDeep, nil},
		{"shared", h.Shared, "f", tree.ErrTooManyEntries, nil},
		{"twins", h.Twins, "/b/d", nil, []string{"b/d/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rewrite.DryRun(walktest.Guard(t), r.Repository,
				rewrite.Options{Excludes: []string{tc.exclude}, IDs: []string{tc.snap.ID.String()}})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.snap.ID.Short()) {
					t.Errorf("error %q does not name the snapshot", err)
				}
				return
			}
			if len(res.Changes) != 1 || !slices.Equal(res.Changes[0].Removed, tc.removed) || res.Changes[0].RemovedFiles != 1 {
				t.Errorf("changes %+v, want %q removed (one file)", res.Changes, tc.removed)
			}
		})
	}
}
