package repo

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// agingStore advances a fake clock by step at every pack stored through
// it: each pack is stored step after the one before.
type agingStore struct {
	store.Store
	clk  *clock.Fake
	step time.Duration
}

func (s agingStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	info, err := s.Store.Put(ctx, key, data, opts)
	if err == nil && strings.HasPrefix(key, DataPrefix) {
		s.clk.Advance(s.step)
	}
	return info, err
}

// TestSaverCheckpoints stores 7 packs with one uploader and counts the
// index files. At a pace of 2 packs, a checkpoint comes every 2 packs, and
// Flush indexes the 7th: 4 files. At a pace of a minute with packs stored
// 40 seconds apart, the third pack finds the first unindexed for 80s and
// indexes the three, the sixth does the same, and Flush the 7th: 3 files.
// With neither due, Flush alone writes one.
func TestSaverCheckpoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		packs int
		age   time.Duration
		step  time.Duration
		files int64
	}{
		{"by count", 2, time.Hour, 0, 4},
		{"by age", 1000, time.Minute, 40 * time.Second, 3},
		{"neither", 1000, time.Hour, time.Second, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := local.New(t.TempDir())
			if _, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}, PackSize: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			clk := clock.NewFake(time.Unix(1e9, 0))
			aging := agingStore{Store: st, clk: clk, step: tc.step}
			r, err := Open(ctx, aging, Credentials{PlatformKey: testPlatformKey})
			if err != nil {
				t.Fatal(err)
			}
			s := writerFor(t, r, st).NewSaverWith(ctx, SaverOptions{Uploaders: 1, Compression: pack.Zstd,
				CheckpointPacks: tc.packs, CheckpointAge: tc.age, Clock: clk})
			// Incompressible 400 KiB blobs: two to a 1 MiB pack, so 14
			// blobs make 7 packs.
			rng := rand.New(rand.NewPCG(1, 2))
			for range 14 {
				data := make([]byte, 400<<10)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				if _, err := s.Save(ctx, pack.DataBlob, r.Key().ID(data), data); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			stats := s.Stats()
			if stats.PacksStored != 7 || stats.IndexFiles != tc.files {
				t.Errorf("%d packs, %d index files; want 7 and %d", stats.PacksStored, stats.IndexFiles, tc.files)
			}
		})
	}
}
