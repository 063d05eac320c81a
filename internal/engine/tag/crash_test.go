package tag_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestFailureBetweenWriteAndDelete injects a store failure into the
// rewrite's two writes. Whatever fails, no backup is lost: every snapshot
// object listed restores the tree, and after a failure between the new
// object's write and the old one's delete both are listed, the new one
// naming the old as its original.
func TestFailureBetweenWriteAndDelete(t *testing.T) {
	tests := []struct {
		name string
		cfg  fault.Config
		// newSaved: the rewritten object is in the store afterwards.
		newSaved bool
	}{
		// The 1st mutation is the new snapshot's Put, the 2nd the old one's Delete.
		{"delete fails", fault.Config{KillAt: 2}, true},
		{"put lands, reply lost", fault.Config{KillAt: 1, KillMidPut: true}, true},
		{"put fails", fault.Config{KillAt: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			creds := repo.Credentials{Password: "pw"}
			if _, _, err := repo.Init(ctx, local.New(dir), repo.InitOptions{Credentials: creds}); err != nil {
				t.Fatal(err)
			}
			plain, err := repo.Open(ctx, local.New(dir), creds)
			if err != nil {
				t.Fatal(err)
			}
			src := source(t)
			b, err := backup.Run(ctx, checktest.Writer(t, local.New(dir), plain), nil, backup.Options{Path: src, Hostname: "h", Tags: []string{"a"}, Clock: clock.NewFake(day(1))})
			if err != nil {
				t.Fatal(err)
			}

			cfg := tc.cfg
			cfg.Kill = func() {} // returning makes the operation fail with ErrInjected instead of killing the test
			faulty, err := repo.Open(ctx, fault.New(local.New(dir), cfg), creds)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tag.Run(ctx, checktest.Writer(t, local.New(dir), faulty), tag.Options{Add: []string{"b"}, IDs: []string{b.ID.String()}})
			if !errors.Is(err, fault.ErrInjected) {
				t.Fatalf("tag with an injected failure: %v", err)
			}

			snaps, _, err := plain.Snapshots(ctx)
			if err != nil {
				t.Fatalf("listing after the failure: %v", err)
			}
			if want := map[bool]int{true: 2, false: 1}[tc.newSaved]; len(snaps) != want {
				t.Fatalf("%d snapshots listed, want %d", len(snaps), want)
			}
			for _, s := range snaps {
				wantRestores(t, local.New(dir), plain, s.ID, src)
				if s.ID == b.ID {
					if !slices.Equal(s.Tags, []string{"a"}) {
						t.Errorf("the old snapshot's tags became %q", s.Tags)
					}
					continue
				}
				if s.Original != b.ID || !slices.Equal(s.Tags, []string{"a", "b"}) || s.Tree != b.Snapshot.Tree {
					t.Errorf("the new snapshot: original %v, tags %q", s.Original.Short(), s.Tags)
				}
			}
			if snaps[0].ID != b.ID && snaps[len(snaps)-1].ID != b.ID {
				t.Error("the old snapshot is gone")
			}
		})
	}
}
