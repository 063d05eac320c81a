package repo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestSaverPackBuffers checks the data pack buffers: at most uploaders+1 in
// use, the one given back last reused first, and a wait for a free one ends
// with its context.
func TestSaverPackBuffers(t *testing.T) {
	ctx := context.Background()
	r, _, err := Init(ctx, local.New(t.TempDir()), InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}})
	if err != nil {
		t.Fatal(err)
	}
	const uploaders = 2
	s := r.NewSaver(ctx, uploaders)
	defer s.Abort()

	var taken [][]byte
	for i := 0; i < uploaders+1; i++ {
		buf, err := s.takeBuffer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cap(buf) != r.cfg.PackSize || len(buf) != 0 {
			t.Fatalf("buffer %d: len %d cap %d, want an empty pack-sized buffer", i, len(buf), cap(buf))
		}
		taken = append(taken, buf)
	}

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
