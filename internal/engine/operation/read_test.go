package operation_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/stats"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store"
)

// readOp runs one read operation with lock lk, calling inside (when the
// operation has a callback) while it reads.
type readOp func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, inside func()) error

// readOps are the read operations, each run once on the repository of
// readRepo.
func readOps() map[string]readOp {
	latestTwo := func(all []snapshot.WithID) (snapshot.WithID, snapshot.WithID, error) {
		return all[0], all[len(all)-1], nil
	}
	return map[string]readOp{
		"List": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, inside func()) error {
			_, err := operation.List(ctx, r, lk, "latest", nil, func(string, *tree.Node) error { inside(); return nil })
			return err
		},
		"Lookup": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, _ func()) error {
			_, _, err := operation.Lookup(ctx, r, lk, "latest", "a")
			return err
		},
		"Browse": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, _ func()) error {
			_, _, err := operation.Browse(ctx, r, lk, "latest", "")
			return err
		},
		"Dump": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, inside func()) error {
			_, _, err := operation.Dump(ctx, r, lk, operation.DumpRequest{Ref: "latest", Path: "a",
				Open: func(snapshot.WithID, *tree.Node) (string, io.Writer, error) { inside(); return "", io.Discard, nil }})
			return err
		},
		"Find": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, inside func()) error {
			_, err := operation.Find(ctx, r, lk, operation.Refs(), operation.FindOptions{Patterns: []string{"a"}},
				func(operation.FindMatch) error { inside(); return nil })
			return err
		},
		"Diff": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, inside func()) error {
			return operation.Diff(ctx, r, lk, latestTwo, func(operation.DiffChange) { inside() })
		},
		"Stats": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, _ func()) error {
			_, err := operation.Stats(ctx, r, lk, operation.Refs())
			return err
		},
		"Growth": func(ctx context.Context, r *operation.Repo, lk operation.ReadLock, _ func()) error {
			_, err := operation.Growth(ctx, r, lk, operation.Refs())
			return err
		},
	}
}

// readRepo makes a repository of two snapshots: a and b/c, then a changed
// and b/d added. It returns its directory, store and snapshot ids.
func readRepo(t *testing.T) (string, store.Store, [2]string) {
	t.Helper()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "a", 1, 1000)
	checktest.WriteFile(t, src, "b/c", 2, 3000)
	first := checktest.Backup(t, st, src)
	checktest.WriteFile(t, src, "a", 3, 2000)
	checktest.WriteFile(t, src, "b/d", 4, 10)
	second := checktest.Backup(t, st, src)
	return dir, st, [2]string{first.String(), second.String()}
}

// TestReadOperationsTakeTheirLock: each read operation holds a shared lock
// named as its caller asks while it reads (an exclusive lock held elsewhere
// makes it fail with ErrLocked; a shared one does not), or none with
// NoLock; and none leaves its lock behind.
func TestReadOperationsTakeTheirLock(t *testing.T) {
	ctx := context.Background()
	dir, st, _ := readRepo(t)
	for _, held := range []string{"none", "shared", "exclusive"} {
		for name, op := range readOps() {
			for _, lk := range []operation.ReadLock{operation.NoLock, "reader"} {
				t.Run(held+"/"+name+"/"+string(lk), func(t *testing.T) {
					if held != "none" {
						l := hold(t, st, held == "exclusive")
						defer func() { _ = l.Release(ctx) }()
					}
					called := false
					err := op(ctx, openRepo(t, dir), lk, func() {
						if called {
							return
						}
						called = true
						if got := readerLocks(t, st); got != (lk != operation.NoLock) {
							t.Errorf("a lock named reader held while reading: %v, want %v", got, lk != operation.NoLock)
						}
					})
					blocked := held == "exclusive" && lk != operation.NoLock
					if blocked != errors.Is(err, lock.ErrLocked) || (!blocked && err != nil) {
						t.Fatalf("%v (blocked: %v)", err, blocked)
					}
					if readerLocks(t, st) {
						t.Fatal("the reader's lock was left behind")
					}
				})
			}
		}
	}
}

// readerLocks reports whether st holds a shared lock named "reader".
func readerLocks(t *testing.T, st store.Store) bool {
	t.Helper()
	infos, err := lock.List(context.Background(), st, lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(infos, func(i lock.Info) bool { return i.Operation == "reader" && i.IsShared })
}

// TestListResolvesRefs: List lists the snapshot a ref names, whole or
// under some paths, and names what it cannot find.
func TestListResolvesRefs(t *testing.T) {
	dir, _, ids := readRepo(t)
	r := openRepo(t, dir)
	cases := []struct {
		name, ref string
		paths     []string
		want      []string
		wantID    string
		err       error
	}{
		{"latest", "latest", nil, []string{"a", "b", "b/c", "b/d"}, ids[1], nil},
		{"prefix", ids[0][:8], nil, []string{"a", "b", "b/c"}, ids[0], nil},
		{"under", "latest", []string{"b"}, []string{"b", "b/c", "b/d"}, ids[1], nil},
		{"file", ids[0], []string{"/a"}, []string{"a"}, ids[0], nil},
		{"missing path", "latest", []string{"nope"}, nil, ids[1], operation.ErrNotInSnapshot},
		{"no such snapshot", "ffffffff", nil, nil, "", repo.ErrNoSnapshot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			snap, err := operation.List(context.Background(), r, operation.NoLock, c.ref, c.paths, func(p string, _ *tree.Node) error {
				got = append(got, p)
				return nil
			})
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if c.err == nil && !slices.Equal(got, c.want) {
				t.Errorf("listed %q, want %q", got, c.want)
			}
			if c.wantID != "" && snap.ID.String() != c.wantID {
				t.Errorf("snapshot %s, want %s", snap.ID, c.wantID)
			}
		})
	}
}

// TestBrowseAndLookup: Browse lists one directory, Lookup finds one entry,
// and both name what the snapshot does not hold.
func TestBrowseAndLookup(t *testing.T) {
	ctx := context.Background()
	dir, _, ids := readRepo(t)
	r := openRepo(t, dir)
	cases := []struct {
		name, ref, path string
		want            []string // Browse's entries; nil: Browse fails with err
		err             error
	}{
		{"root", ids[0], "", []string{"a", "b"}, nil},
		{"dir", "latest", "b", []string{"c", "d"}, nil},
		{"file", "latest", "a", nil, operation.ErrNotDir},
		{"missing", "latest", "b/x", nil, operation.ErrNotFound},
		{"no such snapshot", "ffffffff", "", nil, repo.ErrNoSnapshot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, entries, err := operation.Browse(ctx, r, "reader", c.ref, c.path)
			var got []string
			for _, n := range entries {
				got = append(got, n.Name)
			}
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) || !slices.Equal(got, c.want) {
				t.Fatalf("Browse: %q %v, want %q %v", got, err, c.want, c.err)
			}
			_, n, err := operation.Lookup(ctx, r, "reader", c.ref, c.path)
			if c.err == operation.ErrNotDir {
				if err != nil || n.Type != tree.TypeFile {
					t.Fatalf("Lookup: %+v %v, want a file", n, err)
				}
			} else if !errors.Is(err, c.err) || (c.err == nil && n.Type != tree.TypeDir) {
				t.Fatalf("Lookup: %+v %v, want %v", n, err, c.err)
			}
		})
	}
}

// TestDump writes a file's contents, or a tar of a directory, from the
// snapshot a ref names; a missing path fails before Open is called.
func TestDump(t *testing.T) {
	dir, _, ids := readRepo(t)
	r := openRepo(t, dir)
	cases := []struct {
		name, ref, path, format string
		fromSource              bool
		want                    []string // tar entries; nil: the contents of file a of ids[0]
		opened                  bool
		err                     error
	}{
		{"contents", ids[0], "a", "", false, nil, true, nil},
		{"tar", "latest", "b", operation.FormatTar, false, []string{"b/", "b/c", "b/d"}, true, nil},
		{"missing", "latest", "x", "", false, nil, false, operation.ErrNotFound},
		{"no such snapshot", "ffffffff", "a", "", false, nil, false, repo.ErrNoSnapshot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			snap, opened, err := operation.Dump(context.Background(), r, "reader", operation.DumpRequest{Ref: c.ref, Path: c.path,
				FromSource: c.fromSource, Open: func(snapshot.WithID, *tree.Node) (string, io.Writer, error) { return c.format, &buf, nil }})
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) || opened != c.opened {
				t.Fatalf("%v (opened %v), want %v (opened %v)", err, opened, c.err, c.opened)
			}
			if c.err != nil {
				return
			}
			if c.ref == ids[0] && snap.ID.String() != ids[0] {
				t.Errorf("snapshot %s, want %s", snap.ID, ids[0])
			}
			if c.want == nil {
				if buf.Len() != 1000 {
					t.Errorf("%d bytes, want 1000", buf.Len())
				}
				return
			}
			if got := tarNames(t, &buf); !slices.Equal(got, c.want) {
				t.Errorf("archive %q, want %q", got, c.want)
			}
		})
	}
}

// tarNames lists the entries of a tar archive.
func tarNames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// TestFindDiffStats: Find, Diff, Stats and Growth read the snapshots they
// are given, and return what their engines return.
func TestFindDiffStats(t *testing.T) {
	ctx := context.Background()
	dir, _, ids := readRepo(t)
	r := openRepo(t, dir)
	t.Run("find", func(t *testing.T) {
		a0, a1, d1 := ids[0][:4]+"/a", ids[1][:4]+"/a", ids[1][:4]+"/b/d"
		for _, c := range []struct {
			refs     []string
			want     []string
			searched int
		}{
			{nil, []string{a0, a1, d1}, 2},
			{[]string{ids[1]}, []string{a1, d1}, 1},
			{[]string{"latest", ids[1][:8]}, []string{a1, d1}, 1},
		} {
			var got []string
			res, err := operation.Find(ctx, r, "reader", operation.Refs(c.refs...), operation.FindOptions{Patterns: []string{"[ad]"}},
				func(m operation.FindMatch) error { got = append(got, m.Snapshot.ID.String()[:4]+m.Path); return nil })
			if err != nil || !slices.Equal(got, c.want) || len(res.All) != 2 || len(res.Searched) != c.searched {
				t.Errorf("%v: %q %v %+v, want %q", c.refs, got, err, res, c.want)
			}
		}
		if _, err := operation.Find(ctx, r, "reader", operation.Refs("ffffffff"), operation.FindOptions{}, nil); !errors.Is(err, repo.ErrNoSnapshot) {
			t.Errorf("an unknown snapshot: %v", err)
		}
	})
	t.Run("diff", func(t *testing.T) {
		var got []string
		err := operation.Diff(ctx, r, operation.NoLock, func(all []snapshot.WithID) (snapshot.WithID, snapshot.WithID, error) {
			return all[0], all[1], nil
		}, func(c operation.DiffChange) { got = append(got, c.Change+" "+c.Path) })
		want := []string{operation.DiffModified + " a", operation.DiffAdded + " b/d"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q %v, want %q", got, err, want)
		}
		errPick := errors.New("no choice")
		err = operation.Diff(ctx, r, operation.NoLock, func([]snapshot.WithID) (a, b snapshot.WithID, err error) { return a, b, errPick }, nil)
		if !errors.Is(err, errPick) {
			t.Errorf("a pick that fails: %v", err)
		}
	})
	t.Run("stats", func(t *testing.T) {
		rr := openRepo(t, dir).Reader()
		snaps, err := operation.IndexedSnapshots(ctx, rr)
		if err != nil {
			t.Fatal(err)
		}
		c := stats.NewCounter(rr)
		if err := c.Add(ctx, snaps[0]); err != nil {
			t.Fatal(err)
		}
		got, err := operation.Stats(ctx, r, "reader", operation.Refs(ids[0]))
		if err != nil || got != c.Totals() {
			t.Errorf("%+v %v, want %+v", got, err, c.Totals())
		}
		want, err := stats.Growth(ctx, rr, snaps)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := operation.Growth(ctx, r, "reader", operation.Refs())
		if err != nil || !slices.Equal(rows, want) {
			t.Errorf("%+v %v, want %+v", rows, err, want)
		}
	})
}

// TestDumpFromSource: with FromSource, a path under the snapshot's source
// directory names the entry it names in the source.
func TestDumpFromSource(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a source directory on Windows has a volume name, which a snapshot's path keeps in its own form")
	}
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := t.TempDir()
	checktest.WriteFile(t, src, "a", 1, 10)
	checktest.Backup(t, st, src)
	abs, err := filepath.Abs(filepath.Join(src, "a"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _, err = operation.Dump(context.Background(), openRepo(t, dir), operation.NoLock, operation.DumpRequest{Ref: "latest",
		Path: filepath.ToSlash(abs), FromSource: true, Open: func(snapshot.WithID, *tree.Node) (string, io.Writer, error) { return "", &buf, nil }})
	want, _ := os.ReadFile(abs)
	if err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%v: %d bytes, want %d", err, buf.Len(), len(want))
	}
}
