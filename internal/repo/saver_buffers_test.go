package repo

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestSaverPackBuffers checks the data pack buffers: at most uploaders+1 in
// use, the one given back last reused first, and a wait for a free one ends
// with its context.
func TestSaverPackBuffers(t *testing.T) {
	ctx := context.Background()
	st := local.New(t.TempDir())
	r, _, err := Init(ctx, st, InitOptions{Credentials: Credentials{PlatformKey: testPlatformKey}})
	if err != nil {
		t.Fatal(err)
	}
	const uploaders = 2
	s := writerFor(t, r, st).NewSaver(ctx, uploaders, pack.Zstd)
	defer s.Abort()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var taken [][]byte
	for i := 0; i < uploaders+1; i++ {
		buf, err := s.takeBuffer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) != 0 || cap(buf) != r.cfg.PackSize {
			t.Fatalf("buffer %d: len %d cap %d, want an empty one holding a pack (%d)", i, len(buf), cap(buf), r.cfg.PackSize)
		}
		buf = buf[:cap(buf)]
		for j := range buf { // usable to its end
			buf[j] = byte(i)
		}
		taken = append(taken, buf[:i+3])
	}
	runtime.ReadMemStats(&after)
	// Not on the Go heap, so they do not double the garbage collector's
	// target (packMemory).
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > int64(r.cfg.PackSize) {
		t.Errorf("%d pack buffers grew the Go heap by %d bytes, want them outside it", uploaders+1, grown)
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

// TestPackMemory: buffers allocated after free come from the heap, so a
// late caller never writes to unmapped memory.
func TestPackMemory(t *testing.T) {
	var m packMemory
	buf := m.alloc(1 << 20)
	buf = append(buf, make([]byte, 1<<20)...)
	if len(m.regions) != 1 || &buf[0] != &m.regions[0][0] {
		t.Fatalf("alloc did not map its buffer (%d regions)", len(m.regions))
	}
	m.free()
	m.free() // again: nothing
	late := m.alloc(1 << 20)
	late = append(late, 1)
	if len(m.regions) != 0 || late[0] != 1 || cap(late) != 1<<20 {
		t.Fatalf("after free: %d regions, cap %d", len(m.regions), cap(late))
	}
}
