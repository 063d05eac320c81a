package repair_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/repair"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// fixture is a repository in a local store holding three snapshots of
// three source directories that share some content, each stored by its
// own backup (so with its own index file and packs).
type fixture struct {
	dir  string
	st   store.Store
	srcs []string
	ids  []id.ID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	f.st = checktest.NewRepo(t, f.dir)
	for i := range 3 {
		src := t.TempDir()
		checktest.WriteFile(t, src, "common", 1, 300<<10)
		checktest.WriteFile(t, src, "own", uint64(10+i), 900<<10)
		checktest.WriteFile(t, src, "sub/small", uint64(20+i), 5<<10)
		f.srcs = append(f.srcs, src)
		f.ids = append(f.ids, checktest.Backup(t, f.st, src))
	}
	return f
}

// copyOf returns a copy of f in a new directory.
func (f *fixture) copyOf(t *testing.T) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.CopyFS(dir, os.DirFS(f.dir)); err != nil {
		t.Fatal(err)
	}
	return &fixture{dir: dir, st: local.New(dir), srcs: f.srcs, ids: f.ids}
}

// files returns the paths of the objects under prefix, sorted.
func (f *fixture) files(t *testing.T, prefix string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(f.dir, filepath.FromSlash(prefix)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("no objects under %s: %v", prefix, err)
	}
	sort.Strings(out)
	return out
}

// state maps every object of the repository (lock objects aside) to the
// hash of its content.
func (f *fixture) state(t *testing.T) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.Contains(p, "lock.") {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = sha256.Sum256(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreAll restores every snapshot and compares it with its source.
func (f *fixture) restoreAll(t *testing.T) {
	t.Helper()
	for i, sid := range f.ids {
		checktest.RestoreEqual(t, f.st, sid, f.srcs[i])
	}
}

// check runs check -read-data and returns its problems.
func (f *fixture) check(t *testing.T) []check.Problem {
	t.Helper()
	res, err := check.Run(context.Background(), checktest.Open(t, f.st), check.Options{ReadData: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Errors
}

// entries returns every index entry of the repository by pack, as a fresh
// reader loads them, and the damaged index files it skipped.
func (f *fixture) entries(t *testing.T) (map[id.ID][]pack.Entry, []repo.Damaged) {
	t.Helper()
	r := checktest.Open(t, f.st)
	damaged, err := r.LoadIndex(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[id.ID][]pack.Entry{}
	packs, err := r.Index().Packs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		out[p] = r.Index().PackEntries(p)
	}
	return out, damaged
}

// repairIndex runs repair.Index on st under the exclusive lock (none on a
// dry run), opened with ctx.
func repairIndex(ctx context.Context, t *testing.T, st store.Store, opts repair.IndexOptions) (*repair.IndexResult, error) {
	t.Helper()
	r := checktest.Open(t, st)
	if opts.DryRun {
		return repair.IndexDryRun(ctx, r, opts)
	}
	var res *repair.IndexResult
	var err error
	checktest.Locked(t, st, true, func(lease *lock.Lock) {
		var w *repo.ExclusiveWriter
		if w, err = r.ExclusiveWriter(lease); err == nil {
			res, err = repair.Index(ctx, w, opts)
		}
	})
	return res, err
}

// flip inverts the byte at off (from the end when negative) of path.
func flip(t *testing.T, path string, off int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(data)
	}
	data[off] ^= 0xff
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// plantJunk stores random bytes under prefix ("data/" gets a two-digit
// directory), named by their SHA-256, and returns the key.
func plantJunk(t *testing.T, st store.Store, prefix string) string {
	t.Helper()
	b := make([]byte, 300)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := id.ID(sha256.Sum256(b)).String()
	if prefix == repo.DataPrefix {
		prefix += name[:2] + "/"
	}
	if _, err := st.Put(context.Background(), prefix+name, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return prefix + name
}

// errFlaky is a read failure that says nothing about the object read.
var errFlaky = errors.New("connection reset by peer")

// flaky fails reads (Get and GetRange) of the keys fail names with
// errFlaky; fail gets the key and how many times it was read before.
type flaky struct {
	store.Store
	fail  func(key string, n int) bool
	mu    sync.Mutex
	reads map[string]int
}

func newFlaky(st store.Store, fail func(key string, n int) bool) *flaky {
	return &flaky{Store: st, fail: fail, reads: map[string]int{}}
}

func (f *flaky) failing(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.reads[key]
	f.reads[key]++
	return f.fail(key, n)
}

func (f *flaky) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if f.failing(key) {
		return nil, errFlaky
	}
	return f.Store.Get(ctx, key, max)
}

func (f *flaky) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if f.failing(key) {
		return nil, errFlaky
	}
	return f.Store.GetRange(ctx, key, off, n)
}

// interrupter stops a run at its at-th write or delete of an index file
// (0: never): it cancels the run's context, as Ctrl-C does, and fails the
// request, before it reaches the store or, with after, once it has.
type interrupter struct {
	store.Store
	at     int64
	after  bool
	cancel context.CancelFunc
	n      atomic.Int64
}

func (i *interrupter) step(key string, op func() error) error {
	if !strings.HasPrefix(key, repo.IndexPrefix) || i.n.Add(1) != i.at {
		return op()
	}
	if i.after {
		if err := op(); err != nil {
			return err
		}
	}
	i.cancel()
	return context.Canceled
}

func (i *interrupter) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	var info store.ObjectInfo
	err := i.step(key, func() error {
		var err error
		info, err = i.Store.Put(ctx, key, data, opts)
		return err
	})
	return info, err
}

func (i *interrupter) Delete(ctx context.Context, key string) error {
	return i.step(key, func() error { return i.Store.Delete(ctx, key) })
}

// idOf is the name of an object holding data.
func idOf(data []byte) string { return id.ID(sha256.Sum256(data)).String() }
