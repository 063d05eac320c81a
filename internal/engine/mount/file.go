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
// The offset where a blob starts is the sum of the plain sizes of the
// blobs before it. Index files record plain sizes (version 2), so a read
// far into a file fetches only the blobs it covers. Blobs listed only by
// older index files have no recorded size: the first read past one reads
// it, once; the sizes are kept for the life of the inode. Every blob read
// must have the size its start and the next one's say, so a wrong size in
// a hostile index gives an I/O error, never misplaced bytes.
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
		i, start, next, err := f.blobAt(ctx, pos)
		if err != nil {
			return nil, f.m.errno(f.display(), err)
		}
		data, err := f.m.blobs.get(ctx, f.node.Content[i])
		if err != nil {
			return nil, f.m.errno(f.display(), err)
		}
		if next >= 0 && next-start != int64(len(data)) {
			return nil, f.m.errno(f.display(), fmt.Errorf("blob %d of %d has %d bytes, the index says %d", i+1, len(f.node.Content), len(data), next-start))
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

// blobAt returns the index of the blob holding offset pos, the offset
// where that blob starts and where the next one starts (-1 for the last
// blob), learning the sizes of the blobs before it from the index or, where
// the index does not record them, by reading those blobs.
func (f *fileEntry) blobAt(ctx context.Context, pos int64) (i int, start, next int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	content := f.node.Content
	if len(content) == 0 {
		return 0, 0, 0, fmt.Errorf("the file has %d bytes but no blobs", f.node.Size)
	}
	if len(f.starts) == 0 {
		f.starts = []int64{0}
	}
	for {
		// The last known start belongs to a blob whose size may be unknown.
		k := len(f.starts) - 1
		if k >= len(content) {
			return 0, 0, 0, fmt.Errorf("offset %d is beyond the file's %d blobs", pos, len(content))
		}
		if pos < f.starts[k] {
			i := upperBound(f.starts, pos) - 1
			return i, f.starts[i], f.starts[i+1], nil
		}
		if k == len(content)-1 {
			return k, f.starts[k], -1, nil // the last blob runs to the end
		}
		size, err := f.plainSize(ctx, k)
		if err != nil {
			return 0, 0, 0, err
		}
		f.starts = append(f.starts, f.starts[k]+size)
	}
}

// plainSize returns the size of blob k of the file: recorded in the index,
// or else learnt by reading the blob.
func (f *fileEntry) plainSize(ctx context.Context, k int) (int64, error) {
	if loc, ok := f.m.r.Index().Lookup(f.node.Content[k]); ok && loc.Plain > 0 {
		return int64(loc.Plain), nil
	}
	data, err := f.m.blobs.get(ctx, f.node.Content[k])
	if err != nil {
		return 0, err
	}
	return int64(len(data)), nil
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
