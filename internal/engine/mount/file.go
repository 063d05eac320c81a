//go:build !windows

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
// blobs before it. Index files record plain sizes (version 2): when they
// give every blob's and add up to the file's size, a read far into a file
// fetches only the blobs it covers. Otherwise (blobs listed only by older
// index files, or sizes that do not add up) the first read past a blob
// reads it, once; the sizes are kept for the life of the inode. Every blob
// read must have the size its start and the next one's say: a blob whose
// recorded size is wrong gives an I/O error, not bytes from elsewhere.
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
// blob), learning the sizes of the blobs before it, when the index cannot
// give them all, by reading those blobs.
func (f *fileEntry) blobAt(ctx context.Context, pos int64) (i int, start, next int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	content := f.node.Content
	if len(content) == 0 {
		return 0, 0, 0, fmt.Errorf("the file has %d bytes but no blobs", f.node.Size)
	}
	if len(f.starts) == 0 {
		f.starts = f.indexedStarts(ctx)
	}
	for {
		// The last known start belongs to a blob whose size may be unknown.
		k := len(f.starts) - 1
		if pos < f.starts[k] {
			i := upperBound(f.starts, pos) - 1
			return i, f.starts[i], f.starts[i+1], nil
		}
		if k == len(content)-1 {
			return k, f.starts[k], -1, nil // the last blob runs to the end
		}
		data, err := f.m.blobs.get(ctx, content[k])
		if err != nil {
			return 0, 0, 0, err
		}
		f.starts = append(f.starts, f.starts[k]+int64(len(data)))
	}
}

// indexedStarts returns where each blob of the file starts, from the plain
// sizes in the index, when it records them all and they add up to the
// file's size (the tree's, which its id vouches for); otherwise only the
// first blob's start, and the others are learnt by reading.
func (f *fileEntry) indexedStarts(ctx context.Context) []int64 {
	content := f.node.Content
	starts := make([]int64, 1, len(content))
	end := int64(0)
	for i, b := range content {
		loc, ok := f.m.r.Index().Lookup(ctx, b)
		if !ok || loc.Plain == 0 {
			return starts[:1] // an older index file's blob, or one the read will report
		}
		end += int64(loc.Plain)
		if i+1 < len(content) {
			starts = append(starts, end)
		}
	}
	if end != int64(f.node.Size) {
		f.m.opts.Warnf("%s: the index's blob sizes add up to %d bytes, the file has %d; reading its blobs to place reads", f.display(), end, f.node.Size)
		return starts[:1]
	}
	return starts
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
