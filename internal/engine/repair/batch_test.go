package repair_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// lostPlain damages the index file at path (removes it, or corrupts it)
// and returns its packs, whose plain lengths the repair cannot know.
func lostPlain(t *testing.T, f *fixture, path string, remove bool) map[id.ID]bool {
	t.Helper()
	lost := map[id.ID]bool{}
	for _, pid := range packsOf(t, f, path) {
		lost[pid] = true
	}
	if !remove {
		flip(t, path, 40)
	} else if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	return lost
}

// TestRepairIndexBatches rebuilds the index in batches of 3 packs (the
// fixture has 7): the packs old index files list and those none lists
// (their file removed or corrupt) are all streamed through. Every new
// index file names at most 3 packs, every pack is named exactly once with
// its plain lengths where an old file gave them, a dry run counts the
// same, and the repository then passes check and restores.
func TestRepairIndexBatches(t *testing.T) {
	t.Parallel()
	const batch = 3
	template := newFixture(t)
	healthy, _ := template.entries(t)
	tests := []struct {
		name   string
		damage func(t *testing.T, f *fixture) map[id.ID]bool
	}{
		{"healthy", func(*testing.T, *fixture) map[id.ID]bool { return nil }},
		{"missing index file", func(t *testing.T, f *fixture) map[id.ID]bool {
			return lostPlain(t, f, f.files(t, repo.IndexPrefix)[0], true)
		}},
		{"corrupt index file", func(t *testing.T, f *fixture) map[id.ID]bool {
			return lostPlain(t, f, f.files(t, repo.IndexPrefix)[1], false)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			noPlain := tc.damage(t, f)
			opts := repair.WithBatch(repair.IndexOptions{Workers: 2}, batch)
			dry, err := repairIndex(context.Background(), t, f.st, repair.WithBatch(repair.IndexOptions{DryRun: true}, batch))
			if err != nil {
				t.Fatal(err)
			}
			res, err := repairIndex(context.Background(), t, f.st, opts)
			if err != nil {
				t.Fatal(err)
			}
			packs := len(f.files(t, repo.DataPrefix))
			files := f.files(t, repo.IndexPrefix)
			want := (packs + batch - 1) / batch
			if res.PacksIndexed != packs || res.IndexFilesWritten != want || len(files) != want {
				t.Errorf("%d packs indexed in %d files (%d stored), want %d in %d", res.PacksIndexed, res.IndexFilesWritten, len(files), packs, want)
			}
			dry.DryRun = false
			if !reflect.DeepEqual(dry, res) {
				t.Errorf("dry run %+v\nreal run %+v", dry, res)
			}
			named := map[id.ID]int{}
			for _, p := range files {
				ids := packsOf(t, f, p)
				if len(ids) > batch {
					t.Errorf("%s names %d packs, want at most %d", filepath.Base(p), len(ids), batch)
				}
				for _, pid := range ids {
					named[pid]++
				}
			}
			for pid, n := range named {
				if n != 1 {
					t.Errorf("pack %s named by %d index files", pid.Short(), n)
				}
			}
			got, _ := f.entries(t)
			sameEntries(t, healthy, got, noPlain)
			if problems := f.check(t); len(problems) > 0 {
				t.Errorf("check after the repair: %v", problems)
			}
			f.restoreAll(t)
		})
	}
}

// TestRepairIndexFailsAfterWrites: a read that fails (not damage) once
// new index files may have been written, of a pack's header or of an old
// index file read a second time, stops the run with an error that does
// not claim nothing changed when something was; every old index file is
// still there, no index entry is lost, and a second run finishes the
// repair.
func TestRepairIndexFailsAfterWrites(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	healthy, _ := template.entries(t)
	tests := []struct {
		name string
		// victim returns the key whose reads fail from the n-th on, and
		// whether new files are written before.
		victim func(t *testing.T, f *fixture, unindexed map[id.ID]bool) (key string, n int, wrote bool)
	}{
		{"pack header", func(_ *testing.T, _ *fixture, unindexed map[id.ID]bool) (string, int, bool) {
			var last id.ID // read last: unindexed packs come after the others, by id
			for pid := range unindexed {
				if bytes.Compare(pid[:], last[:]) > 0 {
					last = pid
				}
			}
			return repo.PackKey(last), 0, true
		}},
		{"old index file read again", func(t *testing.T, f *fixture, _ map[id.ID]bool) (string, int, bool) {
			return f.key(f.files(t, repo.IndexPrefix)[1]), 1, false
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			noPlain := lostPlain(t, f, f.files(t, repo.IndexPrefix)[0], true)
			oldFiles := f.files(t, repo.IndexPrefix)
			victim, from, wrote := tc.victim(t, f, noPlain)
			before := f.state(t)
			known, _ := f.entries(t)
			st := newFlaky(f.st, func(key string, n int) bool { return key == victim && n >= from })
			_, err := repairIndex(context.Background(), t, st, repair.WithBatch(repair.IndexOptions{}, 2))
			if !errors.Is(err, errFlaky) || !strings.Contains(err.Error(), victim) {
				t.Fatalf("repair: %v, want the read failure naming %s", err, victim)
			}
			written := len(f.files(t, repo.IndexPrefix)) - len(oldFiles)
			if wrote && written == 0 {
				t.Error("no index file was written before the failure")
			}
			if written > 0 && strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("repair: %v, after writing %d index files", err, written)
			}
			after := f.state(t)
			for _, p := range oldFiles {
				if after[p] != before[p] {
					t.Errorf("old index file %s changed or gone", filepath.Base(p))
				}
			}
			now, _ := f.entries(t)
			for p, es := range known {
				if len(now[p]) < len(es) {
					t.Errorf("pack %s lost index entries", p.Short())
				}
			}
			if _, err := repairIndex(context.Background(), t, f.st, repair.IndexOptions{}); err != nil {
				t.Fatalf("second repair: %v", err)
			}
			got, _ := f.entries(t)
			sameEntries(t, healthy, got, noPlain)
			if problems := f.check(t); len(problems) > 0 {
				t.Errorf("check after the second repair: %v", problems)
			}
			f.restoreAll(t)
		})
	}
}

// key is the store key of the object at path.
func (f *fixture) key(path string) string {
	return strings.TrimPrefix(filepath.ToSlash(path), filepath.ToSlash(f.dir)+"/")
}

// TestRepairIndexNoProofBatches: with nothing that authenticates, spread
// over several batches, repair index writes and deletes nothing.
func TestRepairIndexNoProofBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	for range 5 {
		plantJunk(t, st, repo.DataPrefix)
	}
	plantJunk(t, st, repo.IndexPrefix)
	f := &fixture{dir: dir, st: st}
	before := f.state(t)
	if _, err := repairIndex(context.Background(), t, st, repair.WithBatch(repair.IndexOptions{}, 1)); !errors.Is(err, repair.ErrNoProof) {
		t.Fatalf("repair: %v, want ErrNoProof", err)
	}
	after := f.state(t)
	for p := range after {
		if filepath.Base(p) == ".cas.lock" { // the local store's, for the lock
			delete(after, p)
		}
	}
	if !reflect.DeepEqual(after, before) {
		t.Error("repair changed the repository")
	}
}
