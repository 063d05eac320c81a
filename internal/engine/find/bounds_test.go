package find_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/find"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted searches the crafted snapshots: the deep one and the one
// shared 2^40 ways fail before any match, with an error naming the
// snapshot; identical directories are searched once per path.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	tests := []struct {
		name    string
		snap    snapshot.WithID
		opts    find.Options
		want    error
		matches int
	}{
		{"deep", h.Deep, find.Options{Patterns: []string{"f"}}, tree.ErrTooDeep, 0},
		{"deep below a prefix", h.Deep, find.Options{PathPrefix: "/d/d", Patterns: []string{"f"}}, tree.ErrTooDeep, 0},
		{"shared", h.Shared, find.Options{Patterns: []string{"f"}}, tree.ErrTooManyEntries, 0},
		{"twins", h.Twins, find.Options{Patterns: []string{"f", "g"}}, nil, 4},
		{"twins below a prefix", h.Twins, find.Options{PathPrefix: "/b"}, nil, 4}, // b, b/f, b/d, b/d/g
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			matches := 0
			err := find.Run(walktest.Guard(t), r.Repository, []snapshot.WithID{tc.snap}, tc.opts, func(find.Match) error {
				matches++
				return nil
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "snapshot "+tc.snap.ID.Short()+": ") {
				t.Errorf("error %q does not name the snapshot", err)
			}
			if matches != tc.matches {
				t.Errorf("%d matches, want %d", matches, tc.matches)
			}
		})
	}
}
