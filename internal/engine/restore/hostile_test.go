package restore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// fixture is a backed-up source tree in a local store.
type fixture struct {
	dir   string // store directory
	st    store.Store
	src   string
	sid   id.ID
	files []string // regular files of src, slash-separated, sorted
}

// newFixture backs up a.txt, big.bin (several chunks), dir/b.txt,
// dir/c.bin and z.txt, each with distinct content.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), src: t.TempDir()}
	f.st = checktest.NewRepo(t, f.dir)
	sizes := map[string]int{"a.txt": 100, "big.bin": 200 << 10, "dir/b.txt": 300, "dir/c.bin": 40 << 10, "z.txt": 50}
	seed := uint64(1)
	for name, size := range sizes {
		checktest.WriteFile(t, f.src, name, seed, size)
		seed++
		f.files = append(f.files, name)
	}
	sort.Strings(f.files)
	f.sid = checktest.Backup(t, f.st, f.src)
	return f
}

// open returns a repository with its index loaded, and the snapshot's root.
func (f *fixture) open(t *testing.T) (*repo.Repository, id.ID) {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, f.st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, f.sid)
	if err != nil {
		t.Fatal(err)
	}
	return r, s.Tree
}

// node finds the node at rel (slash-separated) in the snapshot.
func (f *fixture) node(t *testing.T, rel string) tree.Node {
	t.Helper()
	r, cur := f.open(t)
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		tr, err := r.LoadTree(context.Background(), cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tr.Nodes {
			if n.Name != name {
				continue
			}
			if i == len(parts)-1 {
				return n
			}
			cur = n.Subtree
		}
	}
	t.Fatalf("%s not in the snapshot", rel)
	return tree.Node{}
}

// locate returns the on-disk path of a blob's pack and the blob's location.
func (f *fixture) locate(t *testing.T, blob id.ID) (string, index.Location) {
	t.Helper()
	r, _ := f.open(t)
	loc, ok := r.Index().Lookup(t.Context(), blob)
	if !ok {
		t.Fatalf("blob %s not indexed", blob.Short())
	}
	return filepath.Join(f.dir, filepath.FromSlash(repo.PackKey(loc.Pack))), loc
}

// flip inverts one byte of a file on disk.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(data))
	}
	data[off] ^= 0xff
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// restoreAll restores the fixture's snapshot into a fresh directory and
// returns it with the result and error.
func (f *fixture) restoreAll(t *testing.T) (string, *restore.Result, error) {
	t.Helper()
	r, root := f.open(t)
	out := filepath.Join(t.TempDir(), "out")
	res, err := restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: out, Format: restore.FormatDir})
	return out, res, err
}

// wantRestored checks that exactly the files in damaged are missing from
// out and every other file equals its source byte for byte.
func (f *fixture) wantRestored(t *testing.T, out string, res *restore.Result, damaged ...string) {
	t.Helper()
	f.wantFiles(t, out, res, true, damaged...)
}

// wantFiles is wantRestored, checking Result.Damaged only with names.
func (f *fixture) wantFiles(t *testing.T, out string, res *restore.Result, names bool, damaged ...string) {
	t.Helper()
	var got []string
	if res != nil {
		got = append(got, res.Damaged...)
	}
	sort.Strings(got)
	sort.Strings(damaged)
	if names && strings.Join(got, ",") != strings.Join(damaged, ",") {
		t.Errorf("damaged files %q, want %q", got, damaged)
	}
	bad := map[string]bool{}
	for _, d := range damaged {
		bad[d] = true
	}
	for _, rel := range f.files {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
		if bad[rel] {
			if err == nil {
				t.Errorf("damaged file %s exists in the output (%d bytes)", rel, len(data))
			}
			continue
		}
		want, werr := os.ReadFile(filepath.Join(f.src, filepath.FromSlash(rel)))
		if err != nil || werr != nil || !bytes.Equal(data, want) {
			t.Errorf("%s not restored intact: %v %v", rel, err, werr)
		}
	}
}

// TestRestoreDamagedData damages data packs on disk: the restore names each
// damaged file, restores everything else, and returns ErrDamaged.
func TestRestoreDamagedData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		damage  func(t *testing.T, f *fixture)
		damaged []string
	}{
		{"flipped byte in a blob", func(t *testing.T, f *fixture) {
			path, loc := f.locate(t, f.node(t, "dir/b.txt").Content[0])
			flip(t, path, int64(loc.Offset)+int64(loc.Length)/2)
		}, []string{"dir/b.txt"}},
		{"flipped byte in a nonce", func(t *testing.T, f *fixture) {
			path, loc := f.locate(t, f.node(t, "a.txt").Content[0])
			flip(t, path, int64(loc.Offset))
		}, []string{"a.txt"}},
		{"flipped byte in the last chunk of a big file", func(t *testing.T, f *fixture) {
			c := f.node(t, "big.bin").Content
			path, loc := f.locate(t, c[len(c)-1])
			flip(t, path, int64(loc.Offset)+int64(loc.Length)-1)
		}, []string{"big.bin"}},
		{"pack deleted", func(t *testing.T, f *fixture) {
			path, _ := f.locate(t, f.node(t, "z.txt").Content[0])
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, nil}, // filled in below: every file with a blob in that pack
		{"pack truncated", func(t *testing.T, f *fixture) {
			path, loc := f.locate(t, f.node(t, "z.txt").Content[0])
			if err := os.Truncate(path, int64(loc.Offset)+1); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"pack emptied", func(t *testing.T, f *fixture) {
			path, _ := f.locate(t, f.node(t, "z.txt").Content[0])
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			damaged := tc.damaged
			if damaged == nil {
				damaged = f.filesInPackOf(t, f.node(t, "z.txt").Content[0], tc.name == "pack truncated")
			}
			tc.damage(t, f)
			out, res, err := f.restoreAll(t)
			if !errors.Is(err, restore.ErrDamaged) {
				t.Fatalf("restore error %v, want ErrDamaged", err)
			}
			f.wantRestored(t, out, res, damaged...)
		})
	}
}

// filesInPackOf lists the files with a blob in the pack holding blob (with
// fromBlob, only blobs at or after its offset).
func (f *fixture) filesInPackOf(t *testing.T, blob id.ID, fromBlob bool) []string {
	t.Helper()
	_, loc := f.locate(t, blob)
	r, _ := f.open(t)
	var out []string
	for _, rel := range f.files {
		for _, b := range f.node(t, rel).Content {
			l, _ := r.Index().Lookup(t.Context(), b)
			if l.Pack == loc.Pack && (!fromBlob || l.Offset >= loc.Offset) {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}

// TestRestoreDamagedTree damages the tree blob of one directory: its files
// cannot be named, so the directory itself is reported damaged; every other
// file is restored and the restore returns ErrDamaged, in both formats.
func TestRestoreDamagedTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path, loc := f.locate(t, f.node(t, "dir").Subtree)
	if loc.Type != pack.TreeBlob {
		t.Fatalf("dir's subtree is a %v blob", loc.Type)
	}
	flip(t, path, int64(loc.Offset)+int64(loc.Length)/2)

	out, res, err := f.restoreAll(t)
	if !errors.Is(err, restore.ErrDamaged) {
		t.Fatalf("restore error %v, want ErrDamaged", err)
	}
	if res == nil || strings.Join(res.Damaged, ",") != "dir" {
		t.Fatalf("damaged %v, want [dir]", res)
	}
	f.wantFiles(t, out, res, false, "dir/b.txt", "dir/c.bin")

	r, root := f.open(t)
	zipOut := filepath.Join(t.TempDir(), "out.zip")
	res, err = restore.Run(context.Background(), r, checktest.Lease(t, f.st), root, restore.Options{Output: zipOut, Format: restore.FormatZip, Warnf: t.Logf})
	if !errors.Is(err, restore.ErrDamaged) || strings.Join(res.Damaged, ",") != "dir" {
		t.Fatalf("zip restore: %v, damaged %v; want ErrDamaged and [dir]", err, res.Damaged)
	}
}

// TestRestoreDamagedMetadata damages index files and snapshots: loading
// one fails with a clear error wrapping repo.ErrCorrupt, loading them all
// skips and returns each with that error, nothing panics.
func TestRestoreDamagedMetadata(t *testing.T) {
	t.Parallel()
	objects := func(t *testing.T, f *fixture, prefix string) []string {
		t.Helper()
		ents, err := os.ReadDir(filepath.Join(f.dir, filepath.FromSlash(prefix)))
		if err != nil || len(ents) == 0 {
			t.Fatalf("no objects under %s: %v", prefix, err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, filepath.Join(f.dir, filepath.FromSlash(prefix), e.Name()))
		}
		return out
	}
	tests := []struct {
		name   string
		prefix string
		damage func(t *testing.T, path string)
	}{
		{"index flipped byte", repo.IndexPrefix, func(t *testing.T, p string) { flip(t, p, 30) }},
		{"index truncated", repo.IndexPrefix, func(t *testing.T, p string) { truncate(t, p, 20) }},
		{"index empty", repo.IndexPrefix, func(t *testing.T, p string) { truncate(t, p, 0) }},
		{"snapshot flipped byte", repo.SnapshotPrefix, func(t *testing.T, p string) { flip(t, p, -3) }},
		{"snapshot truncated", repo.SnapshotPrefix, func(t *testing.T, p string) { truncate(t, p, 11) }},
		{"snapshot empty", repo.SnapshotPrefix, func(t *testing.T, p string) { truncate(t, p, 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for _, p := range objects(t, f, tc.prefix) {
				tc.damage(t, p)
			}
			ctx := context.Background()
			r := checktest.Open(t, f.st)
			var errs []error
			var damaged []repo.Damaged
			var err error
			if tc.prefix == repo.IndexPrefix {
				damaged, err = r.LoadIndex(ctx)
			} else {
				_, lerr := r.LoadSnapshot(ctx, f.sid)
				errs = append(errs, lerr)
				_, damaged, err = r.Snapshots(ctx)
			}
			if err != nil || len(damaged) == 0 {
				t.Fatalf("loading all: damaged %v, error %v; want the damaged objects and no error", damaged, err)
			}
			for _, d := range damaged {
				if !strings.HasPrefix(d.Key, tc.prefix) {
					t.Errorf("damaged object %s is not under %s", d.Key, tc.prefix)
				}
				errs = append(errs, d.Err)
			}
			for _, err := range errs {
				if !errors.Is(err, repo.ErrCorrupt) {
					t.Fatalf("error %v, want repo.ErrCorrupt", err)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, strings.TrimSuffix(tc.prefix, "/")) {
					t.Errorf("error %q is not one line naming the object", msg)
				}
			}
		})
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
