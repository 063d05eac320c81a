package repair_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

// packsOf returns the packs an index file names.
func packsOf(t *testing.T, f *fixture, path string) []id.ID {
	t.Helper()
	fid, err := id.Parse(filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	file, err := checktest.Open(t, f.st).IndexFile(context.Background(), fid)
	if err != nil {
		t.Fatal(err)
	}
	var out []id.ID
	for _, p := range file.Packs {
		out = append(out, p.ID)
	}
	return out
}

// sameEntries fails unless got holds exactly want's packs and entries;
// plain lengths are compared except for the packs of noPlain, whose
// entries must then have none.
func sameEntries(t *testing.T, want, got map[id.ID][]pack.Entry, noPlain map[id.ID]bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("the index names %d packs, want %d", len(got), len(want))
	}
	byOffset := func(es []pack.Entry) []pack.Entry {
		es = append([]pack.Entry(nil), es...)
		sort.Slice(es, func(i, j int) bool { return es[i].Offset < es[j].Offset })
		return es
	}
	for p, w := range want {
		w, g := byOffset(w), byOffset(got[p])
		if noPlain[p] {
			for i := range w {
				w[i].Plain = 0
			}
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("pack %s: entries\n%v\nwant\n%v", p.Short(), g, w)
		}
	}
}

// TestRepairIndex damages the index in one way each, repairs it and checks
// that the repository passes check -read-data, that every snapshot
// restores byte for byte, and that the new index names every pack with
// the entries (and, where an old index file gave them, plain lengths) the
// healthy index had.
func TestRepairIndex(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	healthy, _ := template.entries(t)
	oldFiles := len(template.files(t, repo.IndexPrefix))
	tests := []struct {
		name string
		// damage damages f and returns the packs whose plain lengths
		// are lost, and how many damaged index files and stale packs
		// repair must report.
		damage func(t *testing.T, f *fixture) (noPlain map[id.ID]bool, damaged, stale int)
		// extraFiles counts index files the damage added (or, < 0,
		// removed).
		extraFiles int
	}{
		{"healthy", func(*testing.T, *fixture) (map[id.ID]bool, int, int) { return nil, 0, 0 }, 0},
		{"corrupt index file", func(t *testing.T, f *fixture) (map[id.ID]bool, int, int) {
			p := f.files(t, repo.IndexPrefix)[0]
			lost := map[id.ID]bool{}
			for _, pid := range packsOf(t, f, p) {
				lost[pid] = true
			}
			flip(t, p, 40)
			return lost, 1, 0
		}, 0},
		{"missing index file", func(t *testing.T, f *fixture) (map[id.ID]bool, int, int) {
			p := f.files(t, repo.IndexPrefix)[1]
			lost := map[id.ID]bool{}
			for _, pid := range packsOf(t, f, p) {
				lost[pid] = true
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return lost, 0, 0
		}, -1},
		{"junk index file", func(t *testing.T, f *fixture) (map[id.ID]bool, int, int) {
			plantJunk(t, f.st, repo.IndexPrefix)
			return nil, 1, 0
		}, 1},
		{"index file naming a pack that does not exist", func(t *testing.T, f *fixture) (map[id.ID]bool, int, int) {
			checktest.Write(t, f.st, checktest.Open(t, f.st), func(w *repo.Writer) {
				_, err := w.WriteIndex(context.Background(), []index.PackBlobs{{ID: id.ID{1, 2, 3},
					Blobs: []pack.Entry{{Type: pack.DataBlob, ID: id.ID{4}, Length: 100, Plain: 50}}}})
				if err != nil {
					t.Fatal(err)
				}
			})
			return nil, 0, 1
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			noPlain, damaged, stale := tc.damage(t, f)
			if tc.name != "healthy" && len(f.check(t)) == 0 {
				t.Fatal("check finds nothing wrong with the damaged repository")
			}
			res, err := repairIndex(context.Background(), t, f.st, repair.IndexOptions{})
			if err != nil {
				t.Fatal(err)
			}
			packs := len(f.files(t, repo.DataPrefix))
			if res.Packs != packs || res.PacksIndexed != packs || len(res.UnreadablePacks) != 0 ||
				len(res.DamagedIndexFiles) != damaged || res.StalePacks != stale ||
				res.OldIndexFiles != oldFiles+tc.extraFiles || res.IndexFilesRemoved != res.OldIndexFiles || res.IndexFilesWritten != 1 {
				t.Errorf("result %+v: want %d packs all indexed, %d damaged index files, %d stale packs, %d old files removed, 1 written",
					res, packs, damaged, stale, oldFiles+tc.extraFiles)
			}
			if files := f.files(t, repo.IndexPrefix); len(files) != 1 {
				t.Errorf("%d index files after the repair, want 1", len(files))
			}
			got, skipped := f.entries(t)
			if len(skipped) > 0 {
				t.Errorf("damaged index files after the repair: %v", skipped)
			}
			sameEntries(t, healthy, got, noPlain)
			if problems := f.check(t); len(problems) > 0 {
				t.Errorf("check after the repair: %v", problems)
			}
			f.restoreAll(t)
		})
	}
}

// TestRepairIndexUnreadableHeader damages a pack's own header: the pack is
// reported and left in place, and keeps the entries a readable old index
// file gives it (its blobs still restore); with that index file damaged
// too, its blobs are in no index and check says so.
func TestRepairIndexUnreadableHeader(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	for _, alsoIndex := range []bool{false, true} {
		t.Run(map[bool]string{false: "index file readable", true: "index file damaged too"}[alsoIndex], func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			idxFile := f.files(t, repo.IndexPrefix)[0]
			victim := packsOf(t, f, idxFile)[0]
			before, _ := f.entries(t)
			flip(t, filepath.Join(f.dir, filepath.FromSlash(repo.PackKey(victim))), -10)
			if alsoIndex {
				flip(t, idxFile, 40)
			}
			res, err := repairIndex(context.Background(), t, f.st, repair.IndexOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.UnreadablePacks) != 1 || res.UnreadablePacks[0].Key != repo.PackKey(victim) || !repo.IsDamage(res.UnreadablePacks[0].Err) {
				t.Fatalf("unreadable packs %+v, want %s", res.UnreadablePacks, victim.Short())
			}
			if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(repo.PackKey(victim)))); err != nil {
				t.Errorf("the unreadable pack is gone: %v", err)
			}
			after, _ := f.entries(t)
			kept := res.UnreadablePacks[0].EntriesKept
			if alsoIndex {
				if kept != 0 || after[victim] != nil {
					t.Errorf("%d entries kept for the unreadable pack from a damaged index file", kept)
				}
				if len(f.check(t)) == 0 {
					t.Error("check finds nothing wrong although the unreadable pack's blobs are in no index")
				}
				return
			}
			if kept != len(before[victim]) || !reflect.DeepEqual(after[victim], before[victim]) {
				t.Errorf("%d entries kept (%v), want the old index file's %d", kept, after[victim], len(before[victim]))
			}
			f.restoreAll(t)
		})
	}
}

// TestRepairIndexDryRun changes nothing and reports what a real run does.
func TestRepairIndexDryRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	flip(t, f.files(t, repo.IndexPrefix)[0], 40)
	plantJunk(t, f.st, repo.IndexPrefix)
	before := f.state(t)
	dry, err := repairIndex(context.Background(), t, f.st, repair.IndexOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after := f.state(t); !reflect.DeepEqual(after, before) {
		t.Fatal("the dry run changed the repository")
	}
	res, err := repairIndex(context.Background(), t, f.st, repair.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res.DryRun = true
	if !reflect.DeepEqual(dry, res) {
		t.Errorf("dry run %+v\nreal run %+v", dry, res)
	}
}

// TestRepairIndexInterrupted stops repair index (as Ctrl-C does) at each
// of its writes and deletes of index files, before and after the request
// reaches the store, with one new index file and with several (batches of
// 2 packs): every time, every snapshot still restores byte for byte and
// no blob the index named before is missing from it; a second run then
// finishes the repair.
func TestRepairIndexInterrupted(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	plantJunk(t, template.st, repo.IndexPrefix)
	before, _ := template.entries(t)
	for _, batch := range []int{0, 2} {
		t.Run(map[int]string{0: "one file", 2: "batches of 2"}[batch], func(t *testing.T) {
			t.Parallel()
			opts := repair.WithBatch(repair.IndexOptions{}, batch)
			count := &interrupter{Store: template.copyOf(t).st, cancel: func() {}}
			if _, err := repairIndex(context.Background(), t, count, opts); err != nil {
				t.Fatal(err)
			}
			total := int(count.n.Load())
			if total < 4 {
				t.Fatalf("repair made only %d index writes and deletes", total)
			}
			for at := 1; at <= total; at++ {
				for _, after := range []bool{false, true} {
					interruptAt(t, template, before, opts, at, after)
					if t.Failed() {
						return
					}
				}
			}
		})
	}
}

// interruptAt runs repair index on a copy of template, interrupted at its
// at-th index write or delete, checks what it left, and runs it again.
func interruptAt(t *testing.T, template *fixture, before map[id.ID][]pack.Entry, opts repair.IndexOptions, at int, after bool) {
	t.Helper()
	f := template.copyOf(t)
	ctx, cancel := context.WithCancel(context.Background())
	st := &interrupter{Store: f.st, at: int64(at), after: after, cancel: cancel}
	_, err := repairIndex(ctx, t, st, opts)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("op %d (after: %v): %v, want the interruption", at, after, err)
	}
	got, _ := f.entries(t)
	for p, es := range before {
		if len(got[p]) < len(es) {
			t.Errorf("op %d (after: %v): pack %s lost index entries", at, after, p.Short())
		}
	}
	f.restoreAll(t)
	if _, err := repairIndex(context.Background(), t, f.st, opts); err != nil {
		t.Fatalf("op %d (after: %v): repair after the interruption: %v", at, after, err)
	}
	if problems := f.check(t); len(problems) > 0 {
		t.Errorf("op %d (after: %v): check after the second repair: %v", at, after, problems)
	}
}

// TestRepairIndexReadFailure: a read of a pack header or of an old index
// file that fails for another reason than damage stops the run before it
// writes or deletes anything.
func TestRepairIndexReadFailure(t *testing.T) {
	t.Parallel()
	template := newFixture(t)
	for _, prefix := range []string{repo.DataPrefix, repo.IndexPrefix} {
		t.Run(prefix, func(t *testing.T) {
			t.Parallel()
			f := template.copyOf(t)
			flip(t, f.files(t, repo.IndexPrefix)[0], 40)
			victim := strings.TrimPrefix(filepath.ToSlash(f.files(t, prefix)[1]), filepath.ToSlash(f.dir)+"/")
			before := f.state(t)
			st := newFlaky(f.st, func(key string, _ int) bool { return key == victim })
			_, err := repairIndex(context.Background(), t, st, repair.IndexOptions{})
			if !errors.Is(err, errFlaky) || !strings.Contains(err.Error(), victim) {
				t.Fatalf("repair: %v, want the read failure naming %s", err, victim)
			}
			if after := f.state(t); !reflect.DeepEqual(after, before) {
				t.Error("the failed repair changed the repository")
			}
		})
	}
}

// TestRepairIndexNeedsExclusiveLease: repair index writes only through a
// writer of the exclusive lock, which no other lease gives.
func TestRepairIndexNeedsExclusiveLease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := checktest.Open(t, f.st)
	if _, err := r.ExclusiveWriter(nil); !errors.Is(err, repo.ErrNoLease) {
		t.Errorf("without a lease: %v, want repo.ErrNoLease", err)
	}
	if _, err := repair.Index(context.Background(), nil, repair.IndexOptions{}); !errors.Is(err, repo.ErrNoLease) {
		t.Errorf("without a writer: %v, want repo.ErrNoLease", err)
	}
	checktest.Locked(t, f.st, false, func(lease *lock.Lock) {
		if _, err := r.ExclusiveWriter(lease); !errors.Is(err, repo.ErrSharedLease) {
			t.Errorf("with a shared lease: %v, want repo.ErrSharedLease", err)
		}
	})
}

// TestRepairIndexNoProof: when no pack header and no index file
// authenticates, repair index deletes nothing.
func TestRepairIndexNoProof(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	plantJunk(t, st, repo.DataPrefix)
	junkIndex := plantJunk(t, st, repo.IndexPrefix)
	if _, err := repairIndex(context.Background(), t, st, repair.IndexOptions{}); !errors.Is(err, repair.ErrNoProof) {
		t.Fatalf("repair: %v, want ErrNoProof", err)
	}
	if _, err := st.Stat(context.Background(), junkIndex); err != nil {
		t.Errorf("the index file is gone: %v", err)
	}
}
