package forget_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// errFlaky is a read failure that says nothing about the object.
var errFlaky = errors.New("connection reset by peer")

// flakyGets fails every Get of key with errFlaky.
type flakyGets struct {
	store.Store
	key string
}

func (f flakyGets) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if key == f.key {
		return nil, errFlaky
	}
	return f.Store.Get(ctx, key, max)
}

// TestForgetSkipsDamaged: a damaged snapshot is never counted as kept by a
// retention policy nor deleted by one; a snapshot that cannot be read for
// another reason stops forget before it deletes anything.
func TestForgetSkipsDamaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	st := local.New(t.TempDir())
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{PlatformKey: key}}); err != nil {
		t.Fatal(err)
	}
	open := func(st store.Store) *repo.Repository {
		r, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open(st)
	w := checktest.Writer(t, st, r)
	var good []id.ID
	for i := range 3 {
		sid, err := w.SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Unix(int64(100+i), 0), Tree: id.ID{1},
			Hostname: "h", Source: "local:/s", Path: "/s"})
		if err != nil {
			t.Fatal(err)
		}
		good = append(good, sid)
	}
	junk := make([]byte, 300)
	if _, err := rand.Read(junk); err != nil {
		t.Fatal(err)
	}
	bad := repo.SnapshotPrefix + id.ID(sha256.Sum256(junk)).String()
	if _, err := st.Put(ctx, bad, junk, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := forget.Options{Policy: forget.Policy{Last: 2}}

	if _, err := forget.Run(ctx, open(flakyGets{Store: st, key: bad}).WithoutLock(), policy); !errors.Is(err, errFlaky) {
		t.Fatalf("forget with a failing read: %v, want the read's error", err)
	}
	res, err := forget.Run(ctx, r.WithoutLock(), policy)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0] != good[0] {
		t.Errorf("removed %v, want the oldest good snapshot %s alone", res.Removed, good[0].Short())
	}
	for _, g := range res.Groups {
		if len(g.Keep) != 2 || g.Keep[0].ID != good[2] || g.Keep[1].ID != good[1] {
			t.Errorf("kept %v, want the two newest good snapshots", g.Keep)
		}
	}
	if _, err := st.Stat(ctx, bad); err != nil {
		t.Errorf("the damaged snapshot is gone: %v", err)
	}
}
