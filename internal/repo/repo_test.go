package repo

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

func TestInitOpen(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		init  InitOptions
		open  Credentials
		want  error
		plain bool
	}{
		{name: "password", init: InitOptions{Credentials: Credentials{Password: "pw"}}, open: Credentials{Password: "pw"}},
		{name: "wrong password", init: InitOptions{Credentials: Credentials{Password: "pw"}}, open: Credentials{Password: "nope"}, want: ErrWrongCredential},
		{name: "no password", init: InitOptions{Credentials: Credentials{Password: "pw"}}, want: ErrNeedCredential},
		{name: "platform key", init: InitOptions{Credentials: Credentials{PlatformKey: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}},
			open: Credentials{PlatformKey: "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff"}},
		{name: "platform key as password", init: InitOptions{Credentials: Credentials{PlatformKey: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}},
			open: Credentials{Password: "x"}, want: ErrWrongCredential},
		{name: "unencrypted", init: InitOptions{NoEncryption: true}, plain: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := local.New(t.TempDir())
			if _, _, err := Init(ctx, st, c.init); err != nil {
				t.Fatal(err)
			}
			r, err := Open(ctx, st, c.open)
			if !errors.Is(err, c.want) {
				t.Fatalf("Open = %v, want %v", err, c.want)
			}
			if err == nil && r.Key().Encrypted() == c.plain {
				t.Fatalf("encrypted = %v", r.Key().Encrypted())
			}
			if _, _, err := Init(ctx, st, c.init); !errors.Is(err, ErrAlreadyInitialized) {
				t.Fatalf("second Init = %v", err)
			}
		})
	}
}

func TestRecoveryKey(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	_, words, err := Init(ctx, st, InitOptions{Credentials: Credentials{Password: "pw"}, AddRecoveryKey: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, st, Credentials{RecoveryKey: words}); err != nil {
		t.Fatalf("open with recovery key: %v", err)
	}
	if _, err := Open(ctx, st, Credentials{RecoveryKey: "abandon abandon"}); !errors.Is(err, crypt.ErrBadRecoveryKey) {
		t.Fatalf("short phrase: %v", err)
	}
}

func TestNotRepository(t *testing.T) {
	if _, err := Open(context.Background(), local.New(t.TempDir()), Credentials{Password: "x"}); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open empty store = %v", err)
	}
}

func TestSaveLoad(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	r, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[id.ID][]byte{}
	s := writerFor(t, r, st).NewSaver(ctx, 2, pack.Zstd)
	for i := 0; i < 40; i++ {
		data := make([]byte, 1<<20)
		if i%2 == 0 {
			rand.Read(data)
		}
		data[0] = byte(i)
		bid := r.Key().ID(data)
		blobs[bid] = data
		if _, err := s.Save(ctx, pack.DataBlob, bid, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.PacksStored < 2 || st.BlobsAdded != 40 {
		t.Fatalf("stats %+v", st)
	}
	r2, err := Open(ctx, st, Credentials{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for bid, want := range blobs {
		got, err := r2.LoadBlob(ctx, bid)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("LoadBlob: %v", err)
		}
	}
	snap := &snapshot.Snapshot{Time: time.Now(), Tree: id.ID{7}, Source: "local:/x", Hostname: "h", Nonce: []byte{1}}
	sid, err := writerFor(t, r2, st).SaveSnapshot(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := r2.Snapshots(ctx)
	if err != nil || len(list) != 1 || list[0].ID != sid {
		t.Fatalf("Snapshots = %v, %v", list, err)
	}
	if _, err := FindSnapshot(list, sid.String()[:6], nil); err != nil {
		t.Fatal(err)
	}
	// A flipped byte in the snapshot object is detected.
	key := SnapshotKey(sid)
	data, _ := st.Get(ctx, key, MaxSnapshotSize)
	data[len(data)/2] ^= 1
	if _, err := st.Put(ctx, key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.LoadSnapshot(ctx, sid); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt snapshot: %v", err)
	}
}
