package tag_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// TestRun rewrites real snapshots on the local store: tags change under a
// new id, the old object is gone, no other object is touched, the
// original id survives a second rewrite, snapshots whose tags would not
// change are not rewritten, and a dry run changes nothing.
func TestRun(t *testing.T) {
	ctx := context.Background()
	r := walktest.New(t)
	src := source(t)
	s1 := r.Backup(t, src, "h", day(1), "daily")
	s2 := r.Backup(t, src, "h", day(2), "daily", "keep")
	s3 := r.Backup(t, src, "h", day(3))
	data := objects(t, r.Rec.Store)
	w, _ := r.Writer(t)

	t.Run("dry run", func(t *testing.T) {
		res, err := tag.DryRun(ctx, r.Repository, tag.Options{Add: []string{"x"}, FilterTags: []string{"daily"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changes) != 2 || !res.Changes[0].NewID.IsZero() || !slices.Equal(res.Changes[1].NewTags, []string{"daily", "keep", "x"}) {
			t.Errorf("dry run planned %+v", res.Changes)
		}
		if got := snapshotIDs(t, r.Repository); !sameIDs(got, s1.ID, s2.ID, s3.ID) {
			t.Errorf("a dry run changed the snapshots: %v", got)
		}
	})

	// First rewrite: s1 by id; s2 named too but already has "keep".
	res, err := tag.Run(ctx, w, tag.Options{Add: []string{"keep"}, Remove: []string{"daily"}, IDs: []string{s1.ID.String()[:8], s2.ID.String()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 2 || res.Unchanged != 0 {
		t.Fatalf("changes %+v, unchanged %d", res.Changes, res.Unchanged)
	}
	new1 := res.Changes[0].NewID
	if new1.IsZero() || new1 == s1.ID || !res.Changes[0].OldDeleted {
		t.Fatalf("change %+v", res.Changes[0])
	}
	got, err := r.LoadSnapshot(ctx, new1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tags, []string{"keep"}) || got.Original != s1.ID || got.Tree != s1.Tree || !got.Time.Equal(s1.Time) ||
		got.Hostname != s1.Hostname || got.Summary != s1.Summary {
		t.Errorf("rewritten snapshot %+v, from %+v", got, s1.Snapshot)
	}
	new2 := res.Changes[1].NewID
	if got := snapshotIDs(t, r.Repository); !sameIDs(got, new1, new2, s3.ID) {
		t.Errorf("snapshots %v after the rewrite", got)
	}
	if after := objects(t, r.Rec.Store); !maps.Equal(after, data) {
		t.Errorf("tag touched other objects:\nbefore %v\nafter  %v", data, after)
	}

	// Unchanged snapshots are not rewritten.
	res, err = tag.Run(ctx, w, tag.Options{Add: []string{"keep"}, IDs: []string{new1.String(), new2.String()}})
	if err != nil || len(res.Changes) != 0 || res.Unchanged != 2 {
		t.Fatalf("re-adding a present tag: %+v, %v", res, err)
	}
	if got := snapshotIDs(t, r.Repository); !sameIDs(got, new1, new2, s3.ID) {
		t.Errorf("snapshots %v after a no-op", got)
	}

	// Second rewrite of the same backup: Original still names s1.
	res, err = tag.Run(ctx, w, tag.Options{Set: []string{"monthly"}, HasSet: true, FilterTags: []string{"keep"}})
	if err != nil || len(res.Changes) != 2 {
		t.Fatalf("second rewrite: %+v, %v", res, err)
	}
	for i, want := range []id.ID{s1.ID, s2.ID} {
		c := res.Changes[i]
		s, err := r.LoadSnapshot(ctx, c.NewID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Original != want || !slices.Equal(s.Tags, []string{"monthly"}) {
			t.Errorf("after two rewrites: original %v (want %v), tags %q", s.Original.Short(), want.Short(), s.Tags)
		}
		wantRestores(t, r.Rec.Store, r.Repository, c.NewID, src)
	}
	if got := snapshotIDs(t, r.Repository); !sameIDs(got, res.Changes[0].NewID, res.Changes[1].NewID, s3.ID) {
		t.Errorf("snapshots %v after the second rewrite", got)
	}
	if after := objects(t, r.Rec.Store); !maps.Equal(after, data) {
		t.Errorf("the second rewrite touched other objects")
	}

	t.Run("unknown id", func(t *testing.T) {
		if _, err := tag.Run(ctx, w, tag.Options{Add: []string{"x"}, IDs: []string{"ffffffff"}}); err == nil {
			t.Error("an unknown snapshot id accepted")
		}
	})
}

// sameIDs reports whether got holds exactly want, in any order.
func sameIDs(got []id.ID, want ...id.ID) bool {
	a, b := slices.Clone(got), slices.Clone(want)
	cmp := func(x, y id.ID) int { return slices.Compare(x[:], y[:]) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}
