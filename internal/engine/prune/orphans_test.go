package prune_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

// TestDefaultMarginCoversTheLease: the margin for unindexed packs is
// derived from the lock and is never below what its lease rule needs: the
// staleness rule (a TTL and the 1 s resolution of store times past the
// last key write), a request in flight and the store-clock tolerance.
func TestDefaultMarginCoversTheLease(t *testing.T) {
	if want := lock.DefaultTTL + lock.DefaultSafetyMargin + lock.DefaultMaxClockSkew; prune.DefaultMargin != want {
		t.Fatalf("DefaultMargin %v, want TTL + SafetyMargin + MaxClockSkew = %v", prune.DefaultMargin, want)
	}
	if floor := lock.DefaultTTL + time.Second + lock.DefaultRequestTimeout + lock.DefaultMaxClockSkew; prune.DefaultMargin < floor {
		t.Fatalf("DefaultMargin %v is below the lease rule's %v", prune.DefaultMargin, floor)
	}
}

// crashedBackupKey plants the shared lock key a backup killed with kill -9
// leaves, last written ago before now by the store's clock.
func crashedBackupKey(t *testing.T, dir string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago).UTC()
	name := at.Format("2006-01-02T15:04:05.000000000Z07:00") + "-0123456789abcdef"
	payload := fmt.Sprintf(`{"operation":"backup","holder":"crashed (pid 1)","acquired_at":%q,"expires_at":%q,"is_shared":true,"nonce":"0011223344556677"}`,
		at.Format(time.RFC3339Nano), at.Add(lock.DefaultTTL).Format(time.RFC3339Nano))
	p := filepath.Join(dir, "index", "lock.shared", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestCrashedBackupOrphans: a backup killed before indexing its last packs
// leaves them in no index, and its shared key. While the key is live, prune
// does not start; once it is stale, the next prune reclaims the orphans the
// store wrote more than the derived margin before it began, and keeps
// younger ones; check's note says beforehand what prune does.
func TestCrashedBackupOrphans(t *testing.T) {
	cases := []struct {
		name    string
		keyAge  time.Duration // the backup's last refresh, before prune
		packAge time.Duration // its orphans' store time, after that refresh
		keyLive bool
		deleted bool
	}{
		{name: "key still live", keyAge: 10 * time.Second, packAge: 5 * time.Second, keyLive: true},
		// Stale a TTL and a second after its last write, yet younger than the margin.
		{name: "key stale, orphans younger than the margin", keyAge: lock.DefaultTTL + 6*time.Second, packAge: lock.DefaultTTL + 5*time.Second},
		{name: "key stale, orphans older than the margin", keyAge: prune.DefaultMargin + time.Minute, packAge: prune.DefaultMargin + 50*time.Second, deleted: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			src := t.TempDir()
			checktest.WriteFile(t, src, "f", 1, 500<<10)
			sid := checktest.Backup(t, st, src)
			var orphans []string
			for seed := range uint64(3) {
				key, _ := leftoverPack(t, st, 20+seed)
				orphans = append(orphans, key)
			}
			age(t, dir, "data", c.packAge)
			crashedBackupKey(t, dir, c.keyAge)

			cres, err := check.Run(ctx, checktest.Open(t, st), check.Options{})
			if err != nil || !cres.OK() {
				t.Fatalf("check: %v %+v", err, cres)
			}
			want := map[bool]string{true: "older than prune's 1m35s margin (prune removes it)", false: "written less than 1m35s ago (prune's -margin)"}[c.deleted]
			for _, key := range orphans {
				if n := noteOn(cres, key); !strings.Contains(n, want) {
					t.Errorf("check's note on %s: %q, want %q", key, n, want)
				}
			}

			if c.keyLive {
				if _, err := lock.AcquireExclusive(ctx, st, "prune", lock.Options{}); !errors.Is(err, lock.ErrLocked) {
					t.Fatalf("prune's lock beside a live backup key: %v, want ErrLocked", err)
				}
				for _, key := range orphans {
					if !exists(t, st, key) {
						t.Fatalf("orphan %s deleted while a backup's key was live", key)
					}
				}
				return
			}
			res, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{MaxUnused: prune.DefaultMaxUnused, Margin: prune.DefaultMargin})
			if err != nil {
				t.Fatal(err)
			}
			wantDeleted := map[bool]int{true: len(orphans)}[c.deleted]
			if res.UnindexedPacksDeleted != wantDeleted || res.Kept.UnindexedPacks != len(orphans)-wantDeleted {
				t.Fatalf("deleted %d unindexed packs and kept %d, want %d deleted; %+v", res.UnindexedPacksDeleted, res.Kept.UnindexedPacks, wantDeleted, res)
			}
			for _, key := range orphans {
				if exists(t, st, key) == c.deleted {
					t.Errorf("orphan %s exists: %v, want %v", key, c.deleted, !c.deleted)
				}
			}
			mustCheck(t, st)
			checktest.RestoreEqual(t, st, sid, src)
		})
	}
}

// noteOn is check's note on key ("" if none).
func noteOn(res *check.Result, key string) string {
	for _, n := range res.Notes {
		if n.Key == key {
			return n.Message
		}
	}
	return ""
}
