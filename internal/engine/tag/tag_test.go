package tag_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/engine/tag"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

func day(d int) time.Time { return time.Date(2026, 1, d, 12, 0, 0, 0, time.UTC) }

// source writes a small tree and returns its path.
func source(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for name, data := range map[string]string{"a.txt": "alpha\n", "dir/b.bin": strings.Repeat("b", 70000), "dir/c": ""} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// objects returns every key of st but the snapshots and the locks, with
// its size.
func objects(t *testing.T, st store.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := st.List(context.Background(), "", func(oi store.ObjectInfo) error {
		if !strings.HasPrefix(oi.Key, repo.SnapshotPrefix) && oi.Key != lock.ExclusiveKey &&
			!strings.HasPrefix(oi.Key, lock.SharedPrefix) && !strings.HasPrefix(oi.Key, lock.IntentPrefix) {
			out[oi.Key] = oi.Size
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshotIDs lists the snapshot objects in the store.
func snapshotIDs(t *testing.T, r *repo.Repository) []id.ID {
	t.Helper()
	ids, _, err := r.ListIDs(context.Background(), repo.SnapshotPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// wantRestores restores sid of r, opened on st, and compares it with src.
func wantRestores(t *testing.T, st store.Store, r *repo.Repository, sid id.ID, src string) {
	t.Helper()
	s, err := r.LoadSnapshot(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := restore.Run(context.Background(), r, checktest.Lease(t, st), s.Tree, restore.Options{Output: out, Format: restore.FormatDir}); err != nil {
		t.Fatalf("restoring %s: %v", sid.Short(), err)
	}
	for _, name := range []string{"a.txt", "dir/b.bin", "dir/c"} {
		want, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || string(got) != string(want) {
			t.Errorf("restored %s of %s differs (%v)", name, sid.Short(), err)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		opts    tag.Options
		old     []string
		want    []string
		changed bool
	}{
		{"add", tag.Options{Add: []string{"x"}}, []string{"a"}, []string{"a", "x"}, true},
		{"add present", tag.Options{Add: []string{"a"}}, []string{"a"}, []string{"a"}, false},
		{"add twice", tag.Options{Add: []string{"x", "x"}}, nil, []string{"x"}, true},
		{"remove", tag.Options{Remove: []string{"a"}}, []string{"a", "b"}, []string{"b"}, true},
		{"remove absent", tag.Options{Remove: []string{"z"}}, []string{"a"}, []string{"a"}, false},
		{"add and remove", tag.Options{Add: []string{"c"}, Remove: []string{"a"}}, []string{"a", "b"}, []string{"b", "c"}, true},
		{"set", tag.Options{Set: []string{"y", "x", "y"}, HasSet: true}, []string{"a"}, []string{"y", "x"}, true},
		{"set same", tag.Options{Set: []string{"a"}, HasSet: true}, []string{"a"}, []string{"a"}, false},
		{"set empty clears", tag.Options{HasSet: true}, []string{"a"}, nil, true},
		{"set empty on none", tag.Options{HasSet: true}, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := tc.opts.Apply(tc.old)
			if !slices.Equal(got, tc.want) || changed != tc.changed {
				t.Errorf("Apply(%q) = %q, %v; want %q, %v", tc.old, got, changed, tc.want, tc.changed)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ids := []string{"latest"}
	tests := []struct {
		name string
		opts tag.Options
		want error
	}{
		{"nothing to do", tag.Options{IDs: ids}, tag.ErrNoChange},
		{"no selection", tag.Options{Add: []string{"x"}}, tag.ErrNoSelection},
		{"set with add", tag.Options{Add: []string{"x"}, HasSet: true, IDs: ids}, tag.ErrSetAndEdit},
		{"set with remove", tag.Options{Remove: []string{"x"}, HasSet: true, IDs: ids}, tag.ErrSetAndEdit},
		{"empty tag", tag.Options{Add: []string{""}, IDs: ids}, tag.ErrEmptyTag},
		{"empty filter", tag.Options{Add: []string{"x"}, FilterTags: []string{""}}, tag.ErrEmptyTag},
		{"ids", tag.Options{Add: []string{"x"}, IDs: ids}, nil},
		{"filter", tag.Options{Remove: []string{"x"}, FilterTags: []string{"y"}}, nil},
		{"set empty", tag.Options{HasSet: true, IDs: ids}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.opts.Validate(); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Validate() = %v, want %v", err, tc.want)
			}
		})
	}
}
