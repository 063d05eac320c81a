package repo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestSaverPackBuffers checks the data pack buffers: at most uploaders+1 in
// use, the one given back last reused first, and a wait for a free one ends
// with its context.
func TestSaverPackBuffers(t *testing.T) {
	t.Run("Reserve grows to 1 MiB, then to the pack size", testReserve)
	ctx := context.Background()
	r, _, err := Init(ctx, local.New(t.TempDir()), InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}})
	if err != nil {
		t.Fatal(err)
	}
	const uploaders = 2
	s := r.NewSaver(ctx, uploaders)
	defer s.Abort()

	for i := 0; i < uploaders+1; i++ {
		buf, err := s.takeBuffer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if buf != nil {
			t.Fatalf("buffer %d: cap %d, want none allocated before a pack needs it", i, cap(buf))
		}
	}
	// What the uploaders give back: buffers grown by Builder.Reserve.
	taken := [][]byte{make([]byte, 3, 1<<20), make([]byte, 4, 2<<20), make([]byte, 5, 4<<20)}

	t.Run("no more than uploaders+1 in use", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := s.takeBuffer(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("takeBuffer with all buffers in use = %v, want the context's deadline", err)
		}
	})
	t.Run("last given back is reused first", func(t *testing.T) {
		s.giveBuffer(taken[0])
		s.giveBuffer(taken[2][:5])
		buf, err := s.takeBuffer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) != 0 || &buf[:1][0] != &taken[2][:1][0] {
			t.Fatal("takeBuffer did not reuse the buffer given back last, emptied")
		}
	})
	t.Run("a dropped buffer frees its place", func(t *testing.T) {
		s.giveBuffer(nil) // the place of taken[1], whose pack could not be sent
		for i := 0; i < 2; i++ {
			if _, err := s.takeBuffer(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func testReserve(t *testing.T) {
	const limit = 16 << 20
	b := pack.NewBuilderBuffer(nil)
	for _, tc := range []struct{ total, wantCap int }{
		{100, 1 << 20},           // 1 MiB first
		{1 << 20, 1 << 20},       // fits
		{1<<20 + 1, limit},       // then the whole pack
		{limit + 10, limit + 10}, // a blob larger than a pack
	} {
		b.Reserve(tc.total, limit)
		if got := cap(b.Buffer()); got != tc.wantCap {
			t.Fatalf("Reserve(%d): cap %d, want %d", tc.total, got, tc.wantCap)
		}
	}
}
