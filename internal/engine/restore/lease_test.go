package restore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// TestRestoreReportsLostLease: the restore's lock is broken (break-lock by
// hand) and a prune then deletes a pack the restore needs. Whichever pack
// it is, the restore fails with the lost lease, which explains it, not as
// a damaged repository. Before, a missing tree pack was reported as the
// store's "not found" without the lease being asked: only files whose
// data was missing led to the check.
func TestRestoreReportsLostLease(t *testing.T) {
	tests := []struct {
		name string
		// gone picks the blob whose pack the prune deletes.
		gone func(root id.ID, r *repo.Repository) id.ID
	}{
		{"a data pack", func(_ id.ID, r *repo.Repository) id.ID {
			packs, _ := checktest.Listings(t, r)
			return packs[checktest.FirstDataPack(t, packs)].Blobs[0].ID
		}},
		{"the root tree's pack", func(root id.ID, _ *repo.Repository) id.ID { return root }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			_, st, _, sid := checktest.BackedUp(t, 3, 50_000)
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			snap, err := r.LoadSnapshot(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			lease, err := lock.AcquireShared(ctx, st, "restore", lock.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Broken below: there is nothing left to release, and
				// what Release says of it is not under test.
				_ = lease.Release(context.Background())
			})
			if _, err := lock.Break(ctx, st, false, lock.Options{}); err != nil {
				t.Fatal(err)
			}
			loc, ok := r.Index().Lookup(ctx, tt.gone(snap.Tree, r))
			if !ok {
				t.Fatal("the blob to lose is not indexed")
			}
			if err := st.Delete(ctx, repo.PackKey(loc.Pack)); err != nil {
				t.Fatal(err)
			}
			_, err = restore.Run(ctx, r, lease, snap.Tree, restore.Options{Output: t.TempDir()})
			if !errors.Is(err, lock.ErrLeaseLost) {
				t.Fatalf("restore after its lock was broken and a pack deleted: %v, want %v", err, lock.ErrLeaseLost)
			}
		})
	}
}
