package repo_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// TestReadPackHeaderRequests: a pack header is read in one request when
// the pack holds no more blobs than the reader expects (check passes the
// index's count), in two otherwise, and the entries are the same either
// way. Before, every header took two requests (the length, then the
// header): a check of 6 M packs over S3 made 12 M requests.
func TestReadPackHeaderRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st := newHostileRepo(t)
	logged := wrap.NewLogging(st, func(string, ...any) {})
	r, err := repo.Open(ctx, logged, repo.Credentials{PlatformKey: hostileKey})
	if err != nil {
		t.Fatal(err)
	}
	// putPack stores a pack of n blobs of 100 bytes and returns its id,
	// size and entries.
	putPack := func(n int) (id.ID, int64, []pack.Entry) {
		b := pack.NewBuilder(0)
		for i := range n {
			b.Add(pack.DataBlob, id.ID{byte(n), byte(i), byte(i >> 8), 9}, bytes.Repeat([]byte{byte(i)}, 100), 80)
		}
		data, pid, entries, err := b.Finish(r.Key())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, repo.PackKey(pid), data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		return pid, int64(len(data)), entries
	}
	tests := []struct {
		name          string
		blobs, expect int
		wantRequests  int64
	}{
		{"as many blobs as expected", 16, 16, 1},
		{"fewer blobs than expected", 16, 40, 1},
		{"no expectation, a small header", 16, 0, 1},
		{"more blobs than expected", 16, 15, 2},
		{"no expectation, a header past the default", pack.DefaultHeaderBlobs + 1, 0, 2},
		{"a header past the default, expected", pack.DefaultHeaderBlobs + 1, pack.DefaultHeaderBlobs + 1, 1},
		{"one blob, a pack shorter than the tail asked for", 1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, size, want := putPack(tt.blobs)
			before := logged.Counts().Requests
			got, err := r.ReadPackHeader(ctx, pid, size, tt.expect)
			if err != nil {
				t.Fatal(err)
			}
			if n := logged.Counts().Requests - before; n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if !got[i].SameLocation(want[i]) || got[i].ID != want[i].ID {
					t.Fatalf("entry %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}
