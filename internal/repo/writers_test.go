package repo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

func newTestRepo(t *testing.T) (*Repository, store.Store) {
	t.Helper()
	st := local.New(t.TempDir())
	r, _, err := Init(context.Background(), st, InitOptions{Credentials: Credentials{PlatformKey: strings.Repeat("ab", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	return r, st
}

// TestWriteIndexSplits: index files naming more blobs than indexFileTarget
// holds are split (the old writer split only at 4096 packs, so a prune of
// a repository of small files wrote index files no reader decodes), and
// every file is read back.
func TestWriteIndexSplits(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	// 40 packs of 10,000 blobs: 18 MB of records, more than one file.
	var packs []index.PackBlobs
	for p := 0; p < 40; p++ {
		pb := index.PackBlobs{ID: id.ID{byte(p), 1}}
		for b := 0; b < 10000; b++ {
			pb.Blobs = append(pb.Blobs, pack.Entry{Type: pack.DataBlob, ID: id.ID{byte(p), byte(b), byte(b >> 8), 2},
				Offset: uint32(b * 100), Length: 100, Plain: 90})
		}
		packs = append(packs, pb)
	}
	ids, err := writerFor(t, r, st).WriteIndex(ctx, packs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 2 {
		t.Fatalf("wrote %d index files, want them split", len(ids))
	}
	for _, fid := range ids {
		info, err := st.Stat(ctx, IndexKey(fid))
		if err != nil || info.Size > indexFileTarget+1+32 {
			t.Errorf("index file %s: %+v, %v; want at most %d bytes", fid.Short(), info, err, indexFileTarget)
		}
	}
	r2, err := Open(ctx, st, Credentials{PlatformKey: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		if got := len(r2.Index().PackEntries(p.ID)); got != len(p.Blobs) {
			t.Fatalf("pack %s: %d blobs indexed, want %d", p.ID.Short(), got, len(p.Blobs))
		}
	}
}

// TestSnapshotTooLarge: a snapshot over the bound of what a reader reads
// is refused before anything is written (the old code stored it, and no
// reader could decode it again).
func TestSnapshotTooLarge(t *testing.T) {
	ctx := context.Background()
	r, st := newTestRepo(t)
	snap := &snapshot.Snapshot{Time: time.Now(), Tree: id.ID{7}, Source: "local:/", Hostname: "h", Nonce: []byte{1},
		Paths: []string{"/" + strings.Repeat("a", pack.MaxBlobSize)}}
	if err := CheckSnapshotSize(snap); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("CheckSnapshotSize: %v, want ErrTooLarge", err)
	}
	if _, err := writerFor(t, r, st).SaveSnapshot(ctx, snap); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("SaveSnapshot: %v, want ErrTooLarge", err)
	}
	ids, _, err := r.ListIDs(ctx, SnapshotPrefix)
	if err != nil || len(ids) != 0 {
		t.Fatalf("snapshots stored: %v, %v", ids, err)
	}
	snap.Paths = []string{"/a"}
	if err := CheckSnapshotSize(snap); err != nil {
		t.Fatal(err)
	}
}

// TestMetadataSizeBound: saveSealed takes a plaintext of up to
// pack.MaxBlobSize bytes (whose sealed form then fits MaxMetadataSize,
// compressed or not), no more.
func TestMetadataSizeBound(t *testing.T) {
	if err := checkMetadataSize(IndexPrefix, pack.MaxBlobSize); err != nil {
		t.Fatal(err)
	}
	if err := checkMetadataSize(IndexPrefix, pack.MaxBlobSize+1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v, want ErrTooLarge", err)
	}
}
