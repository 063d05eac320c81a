package local

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/store"
)

// alignedBytes returns n pseudo-random bytes starting offset bytes past a
// page boundary.
func alignedBytes(t *testing.T, n, offset int) []byte {
	t.Helper()
	backing := make([]byte, n+offset+directAlign)
	skip := int(uintptr(unsafe.Pointer(&backing[0])) % directAlign)
	if skip != 0 {
		skip = directAlign - skip
	}
	data := backing[skip+offset : skip+offset+n]
	rng := rand.New(rand.NewPCG(uint64(n), uint64(offset)))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return data
}

func TestPutLargeObjects(t *testing.T) {
	cases := []struct {
		name   string
		size   int
		offset int // from a page boundary
		direct int // bytes directPrefix lets O_DIRECT write
	}{
		{"small", 4096, 0, 0},
		{"just below the threshold", directMin - 1, 0, 0},
		{"one aligned MiB", directMin, 0, directMin},
		{"aligned with a tail", 3*directMin + 123, 0, 3 * directMin},
		{"one byte short of a block", directMin + directAlign - 1, 0, directMin},
		{"unaligned memory", 2*directMin + 5, 16, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := alignedBytes(t, tc.size, tc.offset)
			if got := directPrefix(data); got != tc.direct {
				t.Fatalf("directPrefix = %d, want %d", got, tc.direct)
			}
			s := New(t.TempDir())
			ctx := context.Background()
			if _, err := s.Put(ctx, "data/obj", data, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "data/obj", 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
			}
		})
	}
}

// TestDirectWriteBypassesPageCache checks that the aligned prefix really
// went around the page cache, where the file system allows O_DIRECT.
func TestDirectWriteBypassesPageCache(t *testing.T) {
	dir := t.TempDir()
	if !directSupported(t, dir) {
		t.Skipf("the file system of %s refuses O_DIRECT; writeData writes through the page cache there", dir)
	}
	data := alignedBytes(t, 2*directMin+100, 0)
	f, err := os.Create(filepath.Join(dir, "obj"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeData(f, data); err != nil {
		f.Close() //nolint:errcheck // already failing
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)              //nolint:errcheck // test cleanup
	if err := f.Close(); err != nil { // the mapping outlives the descriptor
		t.Fatal(err)
	}
	pages := (len(data) + os.Getpagesize() - 1) / os.Getpagesize()
	resident := make([]byte, pages)
	// x/sys/unix has no mincore wrapper for Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&resident[0]))); errno != 0 {
		t.Fatal(errno)
	}
	cached := 0
	for _, r := range resident[:pages-1] {
		cached += int(r & 1)
	}
	if cached > 0 {
		t.Errorf("%d of the %d pages of the aligned prefix are in the page cache; O_DIRECT was not used", cached, pages-1)
	}
	if resident[pages-1]&1 == 0 {
		t.Errorf("the buffered tail is not in the page cache")
	}
	if !bytes.Equal(m, data) {
		t.Fatal("file content differs from what was written")
	}
}

func directSupported(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_WRONLY|unix.O_DIRECT, 0o600)
	if err != nil {
		return false
	}
	defer os.Remove(f.Name()) //nolint:errcheck // test cleanup
	_, err = f.Write(alignedBytes(t, directAlign, 0))
	return errors.Join(err, f.Close()) == nil
}
