package prune_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// leftoverPack stores a pack no index file names, the way a backup that
// crashed or lost its lease between storing a pack and indexing it leaves
// one, and returns its key and size.
func leftoverPack(t *testing.T, st store.Store, seed uint64) (string, int64) {
	t.Helper()
	r := checktest.Open(t, st)
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(seed*7919 + uint64(i)*31 + uint64(i>>8))
	}
	sealed, err := r.Codec().Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	b := pack.NewBuilder(len(sealed) + 1024)
	b.Add(pack.DataBlob, r.Key().ID(data), sealed, len(data))
	out, pid, _, err := b.Finish(r.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), repo.PackKey(pid), out, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return repo.PackKey(pid), int64(len(out))
}

// age sets the modification time of every file under dir/sub to d ago, as
// if the store had written it then.
func age(t *testing.T, dir, sub string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	err := filepath.Walk(filepath.Join(dir, sub), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, st store.Store, key string) bool {
	t.Helper()
	_, err := st.Stat(context.Background(), key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestReclaimsAtOnce: with the default margin, the packs of
// snapshots forgotten seconds after they were made go in the same run;
// only a fresh pack no index names is kept, and reported.
func TestReclaimsAtOnce(t *testing.T) {
	for _, leftover := range []bool{false, true} {
		t.Run(map[bool]string{false: "forgotten snapshots", true: "and a fresh unindexed pack"}[leftover], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			var ids []id.ID
			var srcs []string
			for i := range 3 {
				src := t.TempDir()
				checktest.WriteFile(t, src, "common", 1, 300<<10)
				checktest.WriteFile(t, src, "own", uint64(10+i), 1200<<10)
				ids, srcs = append(ids, checktest.Backup(t, st, src)), append(srcs, src)
			}
			want := onlyBytes(t, st, ids[0], ids[2]) + onlyBytes(t, st, ids[1], ids[2])
			for _, sid := range ids[:2] {
				if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(ctx, sid); err != nil {
					t.Fatal(err)
				}
			}
			var leftKey string
			var leftSize int64
			if leftover {
				leftKey, leftSize = leftoverPack(t, st, 5)
			}
			before := checktest.DirSize(t, dir, "data")
			opts := prune.Options{MaxUnused: prune.DefaultMaxUnused, Margin: prune.DefaultMargin}
			res, err := pruneLocked(t, st, checktest.Open(t, st), opts)
			if err != nil {
				t.Fatal(err)
			}
			got := before - checktest.DirSize(t, dir, "data")
			t.Logf("reclaimed %d of %d bytes only the forgotten snapshots used; %+v", got, want, res)
			if float64(got) < 0.95*float64(want) {
				t.Fatalf("reclaimed %d bytes, want at least 95%% of %d", got, want)
			}
			if res.Kept.UnindexedPacks != btoi(leftover) || res.Kept.UnindexedBytes != leftSize || res.UnindexedPacksDeleted != 0 {
				t.Fatalf("kept %+v, deleted %d unindexed packs; want %d unindexed pack of %d bytes kept", res.Kept, res.UnindexedPacksDeleted, btoi(leftover), leftSize)
			}
			if res.Kept.MarginSeconds != prune.DefaultMargin.Seconds() {
				t.Fatalf("margin reported as %vs", res.Kept.MarginSeconds)
			}
			if leftover && !exists(t, st, leftKey) {
				t.Fatal("the fresh unindexed pack was deleted")
			}
			mustCheck(t, st)
			checktest.RestoreEqual(t, st, ids[2], srcs[2])
			again, err := pruneLocked(t, st, checktest.Open(t, st), opts)
			if err != nil {
				t.Fatal(err)
			}
			if again.PacksDeleted+again.PacksRepacked != 0 || again.Kept.UnindexedPacks != btoi(leftover) {
				t.Fatalf("second prune: %+v", again)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMarginAppliesToUnindexedPacks: a pack no index names is deleted only
// once the store wrote it more than the margin before prune began.
func TestMarginAppliesToUnindexedPacks(t *testing.T) {
	cases := []struct {
		name    string
		age     time.Duration // how long ago the store wrote the leftover
		margin  time.Duration
		deleted bool
	}{
		{name: "fresh, default margin", margin: prune.DefaultMargin},
		{name: "half the default margin old", age: prune.DefaultMargin / 2, margin: prune.DefaultMargin},
		{name: "a minute past the default margin", age: prune.DefaultMargin + time.Minute, margin: prune.DefaultMargin, deleted: true},
		{name: "59 minutes old, default margin", age: 59 * time.Minute, margin: prune.DefaultMargin, deleted: true},
		{name: "59 minutes old, -margin 1h", age: 59 * time.Minute, margin: time.Hour},
		{name: "two hours old, -margin 1h", age: 2 * time.Hour, margin: time.Hour, deleted: true},
		{name: "fresh, no margin", margin: 0, deleted: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			src := t.TempDir()
			checktest.WriteFile(t, src, "f", 1, 500<<10)
			sid := checktest.Backup(t, st, src)
			key, size := leftoverPack(t, st, 9)
			if c.age > 0 {
				age(t, dir, "data", c.age)
			}
			res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: prune.DefaultMaxUnused, Margin: c.margin})
			if err != nil {
				t.Fatal(err)
			}
			if exists(t, st, key) == c.deleted {
				t.Fatalf("leftover deleted: %v, want %v; %+v", !c.deleted, c.deleted, res)
			}
			wantKept, wantDeleted := 1, 0
			wantBytes := size
			if c.deleted {
				wantKept, wantDeleted, wantBytes = 0, 1, 0
			}
			if res.Kept.UnindexedPacks != wantKept || res.Kept.UnindexedBytes != wantBytes || res.UnindexedPacksDeleted != wantDeleted || res.PacksDeleted != wantDeleted {
				t.Fatalf("result %+v: want %d kept (%d bytes), %d deleted", res, wantKept, wantBytes, wantDeleted)
			}
			mustCheck(t, st)
			checktest.RestoreEqual(t, st, sid, src)
		})
	}
}

// intruderStore lets another writer store objects when prune lists the
// index files the second time (the re-check before its first delete), the
// way a backup whose lock was broken keeps writing; it counts deletes of
// repository objects.
type intruderStore struct {
	store.Store
	lists   atomic.Int32
	deletes atomic.Int32
	intrude func()
}

func (s *intruderStore) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	if prefix == repo.IndexPrefix && s.lists.Add(1) == 2 {
		s.intrude()
	}
	return s.Store.List(ctx, prefix, fn)
}

func (s *intruderStore) Delete(ctx context.Context, key string) error {
	if !strings.HasPrefix(key, "index/lock") { // the release of prune's own lock is no sweep
		s.deletes.Add(1)
	}
	return s.Store.Delete(ctx, key)
}

// rogueWriter is a writer on st that ignores the lock: its lease is on
// another store, as good as none (a backup whose lock was broken, still
// writing).
func rogueWriter(t *testing.T, st store.Store) *repo.Writer {
	t.Helper()
	return checktest.Writer(t, local.New(t.TempDir()), checktest.Open(t, st))
}

// TestConcurrentWriterStopsPrune: an index file or snapshot that appears
// while prune runs (a writer ignoring the lock) stops it before any delete.
func TestConcurrentWriterStopsPrune(t *testing.T) {
	cases := []struct {
		name    string
		intrude func(t *testing.T, st store.Store)
	}{
		{name: "new index file", intrude: func(t *testing.T, st store.Store) {
			ctx := context.Background()
			r := rogueWriter(t, st)
			s := r.NewSaver(ctx, 1, pack.Zstd)
			data := []byte("a blob of a backup that lost its lock")
			if _, err := s.Save(ctx, pack.DataBlob, r.Key().ID(data), data); err != nil {
				t.Error(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Error(err)
			}
		}},
		{name: "new snapshot", intrude: func(t *testing.T, st store.Store) {
			// A writer ignoring the lock: a snapshot stored without one.
			ctx := context.Background()
			r := rogueWriter(t, st)
			snaps, _, err := r.Snapshots(ctx)
			if err != nil || len(snaps) == 0 {
				t.Errorf("snapshots: %v (%d)", err, len(snaps))
				return
			}
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Error(err)
				return
			}
			s := r.NewSaver(ctx, 1, pack.Zstd)
			data := []byte("a blob of the late writer's snapshot")
			if _, err := s.Save(ctx, pack.DataBlob, r.Key().ID(data), data); err != nil {
				t.Error(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Error(err)
			}
			late := *snaps[0].Snapshot
			late.Nonce = []byte("a late writer's snapshot")
			if _, err := r.SaveSnapshot(ctx, &late); err != nil {
				t.Error(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			inner := checktest.NewRepo(t, dir)
			var ids []id.ID
			for i := range 2 {
				src := t.TempDir()
				checktest.WriteFile(t, src, "own", uint64(30+i), 800<<10)
				ids = append(ids, checktest.Backup(t, inner, src))
			}
			if err := checktest.Open(t, inner).WithoutLock().DeleteSnapshot(ctx, ids[0]); err != nil {
				t.Fatal(err)
			}
			st := &intruderStore{Store: inner, intrude: func() { c.intrude(t, inner) }}
			res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: prune.DefaultMaxUnused, Margin: prune.DefaultMargin})
			if !errors.Is(err, prune.ErrConcurrentChange) {
				t.Fatalf("want ErrConcurrentChange, got %v (%+v)", err, res)
			}
			if n := st.deletes.Load(); n != 0 {
				t.Fatalf("%d deletes after a concurrent write", n)
			}
			mustCheck(t, inner)
		})
	}
}
