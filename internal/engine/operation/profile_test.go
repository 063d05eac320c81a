package operation_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// snapshotsOf lists the repository's snapshots whose source is dir and
// whose tags are tags, in any order.
func snapshotsOf(t *testing.T, r *operation.Repo, dir string, tags ...string) []snapshot.WithID {
	t.Helper()
	snaps, _, err := r.Fresh().Reader().Snapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []snapshot.WithID
	for _, s := range snaps {
		if s.Source == "local:"+dir && slices.Equal(slices.Sorted(slices.Values(s.Tags)), slices.Sorted(slices.Values(tags))) {
			out = append(out, s)
		}
	}
	return out
}

// TestRunProfileRetention: a profile's policy applies to the group its
// backup recorded, however the source was written (relative, with a
// trailing slash, absolute), and only to it: the same source with other
// tags keeps all its snapshots.
func TestRunProfileRetention(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"rel", "slash", "abs"} {
		checktest.WriteFile(t, filepath.Join(base, d), "f", 1, 1000)
	}
	t.Chdir(base)
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	r := openRepo(t, dir)
	ctx := context.Background()
	cases := []struct {
		name, path, dir string
		keep            int
		tags            []string
	}{
		{"relative", "./rel", "rel", 1, nil},
		{"trailing slash", filepath.Join(base, "slash") + "/", "slash", 2, nil},
		{"absolute, tagged", filepath.Join(base, "abs"), "abs", 1, []string{"b", "a"}},
	}
	// A snapshot of the same source with another tag: not the profile's.
	if _, err := operation.Backup(ctx, r.Fresh(), backup.Options{Path: "abs", Tags: []string{"a", "b", "manual"}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := operation.ProfileOptions{Job: operation.ProfileBackup, Backup: backup.Options{Path: tc.path, Tags: tc.tags},
				Policy: forget.Policy{Last: tc.keep}, Prune: &prune.Options{MaxUnused: 0.3}}
			var last *operation.ProfileResult
			for range 3 {
				res, err := operation.RunProfile(ctx, r, opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.Backup == nil || res.Forget == nil || res.Prune == nil || res.Group == nil {
					t.Fatalf("a step did not run: %+v", res)
				}
				last = res
			}
			if len(last.Forget.Removed) != 1 {
				t.Errorf("the third run removed %d snapshots, want 1", len(last.Forget.Removed))
			}
			want := filepath.Join(base, tc.dir)
			if last.Group.Source != "local:"+want || last.Group.Path != want {
				t.Errorf("policy applied to %+v, want the recorded source %s", last.Group, want)
			}
			if got := snapshotsOf(t, r, want, tc.tags...); len(got) != tc.keep {
				t.Errorf("%d snapshots kept, want %d", len(got), tc.keep)
			}
		})
	}
	if got := snapshotsOf(t, r, filepath.Join(base, "abs"), "a", "b", "manual"); len(got) != 1 {
		t.Errorf("the hand-tagged snapshot of the same source: %d left, want 1", len(got))
	}

	// The policy alone finds the same group without a backup.
	if _, err := operation.Backup(ctx, r.Fresh(), backup.Options{Path: "rel"}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := operation.RunProfile(ctx, r, operation.ProfileOptions{Job: operation.ProfileForget,
		Backup: backup.Options{Path: "rel/"}, Policy: forget.Policy{Last: 1}})
	if err != nil || res.Forget == nil || len(res.Forget.Removed) != 1 || res.Prune != nil {
		t.Fatalf("forget alone: %+v, %v", res, err)
	}
	if got := snapshotsOf(t, r, filepath.Join(base, "rel")); len(got) != 1 {
		t.Errorf("forget alone kept %d snapshots, want 1", len(got))
	}
}

// TestRunProfileSteps: a dry run forgets nothing; a prune the lock blocks
// leaves the forget result and wraps ErrPruneAfterForget; a source that
// cannot be read fails the backup and forgets nothing.
func TestRunProfileSteps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "f", 1, 1000)
	r := openRepo(t, dir)
	opts := operation.ProfileOptions{Job: operation.ProfileBackup, Backup: backup.Options{Path: src},
		Policy: forget.Policy{Last: 1}, Prune: &prune.Options{}}
	for range 2 {
		if _, err := operation.RunProfile(ctx, r, opts); err != nil {
			t.Fatal(err)
		}
	}

	dry := opts
	dry.Backup.DryRun = true
	res, err := operation.RunProfile(ctx, r, dry)
	if err != nil || res.Backup == nil || res.Forget != nil || res.Prune != nil {
		t.Errorf("dry run: %+v, %v; want a backup and nothing forgotten", res, err)
	}

	held := hold(t, st, false)
	res, err = operation.RunProfile(ctx, r, opts)
	if !errors.Is(err, operation.ErrPruneAfterForget) || !errors.Is(err, lock.ErrLocked) || errors.Is(err, operation.ErrRetention) {
		t.Errorf("prune under a shared lock: %v, want ErrPruneAfterForget and ErrLocked", err)
	}
	if res == nil || res.Forget == nil || len(res.Forget.Removed) != 1 || res.Prune != nil {
		t.Errorf("prune under a shared lock: result %+v, want one snapshot removed and no prune", res)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}

	gone := opts
	gone.Backup.Path = filepath.Join(src, "missing")
	res, err = operation.RunProfile(ctx, r, gone)
	if !errors.Is(err, backup.ErrSource) || res.Forget != nil {
		t.Errorf("missing source: %+v, %v", res, err)
	}
	bad := opts
	bad.Policy = forget.Policy{Last: -1}
	if _, err := operation.RunProfile(ctx, r, bad); !errors.Is(err, operation.ErrRetention) {
		t.Errorf("negative keep: %v, want ErrRetention before any backup", err)
	}
	if got := snapshotsOf(t, r, src); len(got) != 1 {
		t.Errorf("%d snapshots left, want 1", len(got))
	}
}
