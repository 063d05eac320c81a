package mount

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// fileEntry is a regular file of a snapshot, read blob by blob.
//
// The index records each blob's stored size, not its plain size, so the
// offset where a blob starts is learnt by reading the blobs before it. A
// file read from the start (cat, cp, diff) reads nothing extra; the first
// read far into a file of many blobs also reads the blobs before it, once:
// their sizes are kept for the life of the inode.
type fileEntry struct {
	fs.Inode
	entry
	mu     sync.Mutex
	starts []int64 // starts[i]: offset of blob i, known for i < len(starts)
}

var (
	_ fs.NodeOpener = (*fileEntry)(nil)
	_ fs.NodeReader = (*fileEntry)(nil)
)

func (f *fileEntry) Open(_ context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, syscall.EROFS
	}
	// Snapshot contents never change: the kernel may keep its page cache.
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *fileEntry) Read(ctx context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	size := int64(f.node.Size)
	if off >= size || len(dest) == 0 {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), size)
	n := 0
	for pos := off; pos < end; {
		i, start, err := f.blobAt(ctx, pos)
		if err != nil {
			return nil, f.m.errno(f.display(), err)
		}
		data, err := f.m.blobs.get(ctx, f.node.Content[i])
		if err != nil {
			return nil, f.m.errno(f.display(), err)
		}
		if pos-start >= int64(len(data)) {
			return nil, f.m.errno(f.display(), fmt.Errorf("blob %d of %d ends before the file's recorded size", i+1, len(f.node.Content)))
		}
		c := copy(dest[n:end-off], data[pos-start:])
		n += c
		pos += int64(c)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *fileEntry) display() string { return f.snap[:8] + ":/" + f.path }

// blobAt returns the index of the blob holding offset pos and the offset
// where that blob starts, reading blobs before it if their sizes are not
// known yet.
func (f *fileEntry) blobAt(ctx context.Context, pos int64) (int, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.node.Content) == 0 {
		return 0, 0, fmt.Errorf("the file has %d bytes but no blobs", f.node.Size)
	}
	if len(f.starts) == 0 {
		f.starts = []int64{0}
	}
	for {
		// The last known start belongs to a blob whose size may be unknown.
		k := len(f.starts) - 1
		if k >= len(f.node.Content) {
			return 0, 0, fmt.Errorf("offset %d is beyond the file's %d blobs", pos, len(f.node.Content))
		}
		if pos < f.starts[k] {
			i := upperBound(f.starts, pos) - 1
			return i, f.starts[i], nil
		}
		if k == len(f.node.Content)-1 {
			return k, f.starts[k], nil // the last blob runs to the end
		}
		data, err := f.m.blobs.get(ctx, f.node.Content[k])
		if err != nil {
			return 0, 0, err
		}
		f.starts = append(f.starts, f.starts[k]+int64(len(data)))
		if pos < f.starts[k+1] {
			return k, f.starts[k], nil
		}
	}
}

// upperBound returns the index of the first element of s above v.
func upperBound(s []int64, v int64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := (lo + hi) / 2
		if s[mid] <= v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
