package snapcopy_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/repotest"
	"github.com/cloudstic/cloudstic/internal/store"
)

// TestCopyEnd: a copy checks both leases while the copied snapshot's last
// index file is being written (repotest.EndGate holds the index PUT until
// a check's request arrives) and writes the snapshot object only once all
// three are answered; when a check finds its lease lost, no snapshot is
// written and the error names the repository whose lease was lost.
func TestCopyEnd(t *testing.T) {
	t.Parallel()
	src, _, ids := sourceRepo(t)
	tests := []struct {
		name                 string
		srcBroken, dstBroken bool
		wantErr              string // "": none
	}{
		{"leases held", false, false, ""},
		{"source lease lost", true, false, "source: "},
		{"destination lease lost", false, true, "destination: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dstInner := newDest(t, repo.ChunkerParams{Min: 4 << 10, Avg: 16 << 10, Max: 64 << 10})
			gate := repotest.NewEndGate(10 * time.Second)
			_, err := copyOne(ctx, t, gate.Wrap(src, tc.srcBroken), gate.Wrap(dstInner, tc.dstBroken), ids[0].String())
			ev := gate.Events()
			got := destSnapshots(t, dstInner)
			if tc.wantErr != "" {
				if !errors.Is(err, lock.ErrLeaseLost) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("copy: %v, want %v after %q", err, lock.ErrLeaseLost, tc.wantErr)
				}
				if len(got) != 0 || slices.Contains(ev, repotest.SnapshotSent) {
					t.Errorf("snapshot written after a lease was lost: %v (requests %v)", got, ev)
				}
				return
			}
			if err != nil {
				t.Fatalf("copy: %v (requests %v)", err, ev)
			}
			if len(got) != 1 {
				t.Fatalf("destination has %v, want one snapshot", got)
			}
			want := []string{repotest.IndexSent, repotest.IndexDone,
				repotest.CheckSent, repotest.CheckDone, repotest.CheckSent, repotest.CheckDone}
			if n := len(want); len(ev) != n+1 || !sameEvents(ev[:n], want) || ev[n] != repotest.SnapshotSent ||
				slices.Index(ev, repotest.CheckSent) > slices.Index(ev, repotest.IndexDone) {
				t.Errorf("copy's end: %v; want %v in some order with a check sent before the index PUT is answered, then %s",
					ev, want, repotest.SnapshotSent)
			}
		})
	}
}

// copyOne copies the snapshot ref names from src to dst under shared locks
// on both, which it releases (a lost lease's release error is ignored).
func copyOne(ctx context.Context, t *testing.T, src, dst store.Store, ref string) (*snapcopy.Result, error) {
	t.Helper()
	s, d := checktest.Open(t, src), openDest(t, dst)
	for _, r := range []*repo.Repository{s, d} {
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	srcLease, err := lock.AcquireShared(ctx, src, "copy", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srcLease.Release(ctx) //nolint:errcheck // lost in some cases
	dstLease, err := lock.AcquireShared(ctx, dst, "copy", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dstLease.Release(ctx) //nolint:errcheck // as above
	w, err := d.Writer(dstLease)
	if err != nil {
		t.Fatal(err)
	}
	return snapcopy.Run(ctx, s, srcLease, w, snapcopy.Options{IDs: []string{ref}})
}

// sameEvents reports whether got and want hold the same events.
func sameEvents(got, want []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}
