package check_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// TestCrafted checks a repository holding the crafted snapshots: the walk
// visits each of the 100,000-deep snapshot's trees and each of the 2^40-way
// shared one's once, finds every blob, and reports both snapshots as
// corrupt (no reader accepts them), and nothing else.
func TestCrafted(t *testing.T) {
	r := walktest.New(t)
	h := r.WriteHostile(t)
	res, err := check.Run(walktest.Guard(t), r.Reopen(t), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var corrupt []string
	why := map[string]error{repo.SnapshotKey(h.Deep.ID): tree.ErrTooDeep, repo.SnapshotKey(h.Shared.ID): tree.ErrTooManyEntries}
	for _, p := range res.Errors {
		if p.Kind != check.KindCorrupt {
			t.Errorf("unexpected problem: %+v", p)
			continue
		}
		corrupt = append(corrupt, p.Key)
		// The message is what the user sees: it must say which bound.
		if err := why[p.Key]; err == nil || !strings.Contains(p.Message, err.Error()) {
			t.Errorf("%s: message %q does not say %v", p.Key, p.Message, err)
		}
	}
	want := []string{repo.SnapshotKey(h.Deep.ID), repo.SnapshotKey(h.Shared.ID)}
	slices.Sort(corrupt)
	slices.Sort(want)
	if !slices.Equal(corrupt, want) {
		t.Errorf("corrupt %q, want %q", corrupt, want)
	}
	// 100,001 trees deep, 41 shared, 3 twins (the file at the bottom of
	// each is one data blob, and the twins hold 2).
	if res.Trees != walktest.DeepLevels+1+walktest.SharedLevels+1+3 {
		t.Errorf("%d trees walked", res.Trees)
	}
	for _, n := range res.Notes {
		t.Errorf("note: %+v", n)
	}
}
