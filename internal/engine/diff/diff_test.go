package diff_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/diff"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted compares crafted snapshots: a side 100,000 levels deep, or
// shared 2^40 ways (on one side, or on both with different files at the
// bottom, so that every pair of trees differs), fails before any change is
// emitted; twin directories are compared path by path.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	w, _ := r.Writer(t)
	c := walktest.NewCrafter(t, w)
	otherShared := c.Shared(walktest.SharedLevels, c.File("f", []byte("elsewhere\n")))
	twin := c.Tree(c.File("f", []byte("twin\n")), walktest.Dir("d", c.Tree(c.File("g", []byte("g\n")))))
	changed := c.Tree(c.File("f", []byte("changed twin\n")), walktest.Dir("d", c.Tree(c.File("g", []byte("g\n")))))
	twins2 := c.Tree(walktest.Dir("a", twin), walktest.Dir("b", changed))
	c.Snapshot(twins2, walktest.HostileTime.Add(3*time.Hour))

	tests := []struct {
		name    string
		t1, t2  id.ID
		want    error
		changes []string
	}{
		{"deep added", id.ID{}, h.Deep.Tree, tree.ErrTooDeep, nil},
		{"deep removed", h.Deep.Tree, h.Twins.Tree, tree.ErrTooDeep, nil},
		{"shared added", h.Twins.Tree, h.Shared.Tree, tree.ErrTooManyEntries, nil},
		{"shared on both sides", h.Shared.Tree, otherShared, tree.ErrTooManyEntries, nil},
		{"twins, one changed", h.Twins.Tree, twins2, nil, []string{"modified b/f"}},
		{"twins added", id.ID{}, h.Twins.Tree, nil, []string{"added a", "added a/d", "added a/d/g", "added a/f",
			"added b", "added b/d", "added b/d/g", "added b/f"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := diff.Trees(walktest.Guard(t), r.Repository, tc.t1, tc.t2, "", func(c diff.Change) {
				got = append(got, c.Change+" "+c.Path)
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !slices.Equal(got, tc.changes) {
				t.Errorf("changes %q, want %q", got, tc.changes)
			}
		})
	}
}
