//go:build unix

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// makeAmbiguous adds to the local repository r two valid copies of its
// latest snapshot whose ids share their first repo.MinPrefix hex digits,
// and returns that prefix. The command line cannot produce such a pair in
// reasonable time, so this fixture seals snapshots through the repository
// package until two names collide (about 5000 tries for 24 bits).
func makeAmbiguous(t *testing.T, r repoArgs) string {
	t.Helper()
	ctx := context.Background()
	dir := strings.TrimPrefix(r[1], "local:")
	st := local.New(dir)
	rp, err := repo.Open(ctx, st, repo.Credentials{Password: r[3]})
	if err != nil {
		t.Fatalf("opening %s: %v", dir, err)
	}
	snaps, _, err := rp.Snapshots(ctx)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots: %d, %v", len(snaps), err)
	}
	snap := *snaps[len(snaps)-1].Snapshot
	plain, err := snapshot.Encode(&snap)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]byte{}
	for range 1 << 20 {
		sealed, err := rp.Codec().EncodeRaw(plain)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(sealed)
		p := hex.EncodeToString(sum[:])[:repo.MinPrefix]
		if other, ok := seen[p]; ok && sha256.Sum256(other) != sum {
			for _, data := range [][]byte{other, sealed} {
				key := repo.SnapshotKey(id.ID(sha256.Sum256(data)))
				if _, err := st.Put(ctx, key, data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			return p
		}
		seen[p] = sealed
	}
	t.Fatal("no colliding snapshot ids found")
	return ""
}
