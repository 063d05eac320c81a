package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/cloudstic/cloudstic/internal/store"
)

// exactVersionLimit is the size up to which an object's version includes a
// hash of its content. Lock objects (at most 64 KiB) are the objects
// compare-and-swap is used on, and for them the version must change on
// every write: inode, mtime and size alone can repeat when a freed inode is
// reused within one timestamp tick for an object of the same size.
const exactVersionLimit = 64 << 10

// objectInfo describes the regular file at p, found as fi under key. For
// small objects it reads the file through one descriptor, so that the
// inode, times and content hashed all belong to the same file (which must
// still be a regular file: see openObject).
func objectInfo(key, p string, fi fs.FileInfo) (store.ObjectInfo, error) {
	if fi.Size() > exactVersionLimit {
		return store.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), Version: coarseVersion(fi)}, nil
	}
	f, fi, err := openObject(key, p)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	defer f.Close() //nolint:errcheck // read-only descriptor: nothing to flush
	// One byte more than the file holds, to see it grow: a buffer of the
	// object's size, not io.Copy's 32 KiB (listings of many small objects
	// call this for each).
	buf := make([]byte, min(fi.Size(), exactVersionLimit)+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return store.ObjectInfo{}, fmt.Errorf("%s: reading for its version: %w", key, err)
	}
	if int64(n) != fi.Size() {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, errChangedWhileRead)
	}
	sum := sha256.Sum256(buf[:n])
	v := coarseVersion(fi) + "-" + hex.EncodeToString(sum[:12])
	return store.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), Version: v}, nil
}

// errChangedWhileRead: a file's size changed between its stat and its read.
// Store files are written once and renamed into place, so this means
// something outside the store wrote to it.
var errChangedWhileRead = errors.New("file changed while it was read")

// coarseVersion is inode, mtime and size: each write makes a new file, so
// they differ between two writes except for the rare reuse of an inode.
func coarseVersion(fi fs.FileInfo) string {
	return fmt.Sprintf("%x-%x-%x", inode(fi), fi.ModTime().UnixNano(), fi.Size())
}
