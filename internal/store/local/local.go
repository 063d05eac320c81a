package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Store is a store.Store rooted at a directory.
type Store struct {
	root string
}

var _ store.Store = (*Store)(nil)

// New returns a store rooted at dir. The directory need not exist yet: the
// first Put creates it.
func New(dir string) *Store {
	return &Store{root: filepath.Clean(dir)}
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// Describe names the store as "local:DIR".
func (s *Store) Describe() string { return "local:" + s.root }

// RequestCost declares a local disk's: store.LocalRequestCost.
func (s *Store) RequestCost() int64 { return store.LocalRequestCost }

// Capabilities: local disks do both conditional writes atomically.
func (s *Store) Capabilities() store.Capabilities {
	return store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}
}

// Now is this machine's clock, which stamps the store's files.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return time.Now(), ctx.Err()
}

// Close does nothing; a local store holds no resources between calls.
func (s *Store) Close() error { return nil }

func (s *Store) path(key string) (string, error) {
	if err := store.CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// notFound maps "no such file" (and "a path element is a file") to
// store.ErrNotFound; every other error is returned as it is.
func notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	return err
}

// Get reads the whole object if it is a regular file of at most max bytes.
// Its size is checked on the open descriptor before anything is read.
func (s *Store) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := openObject(key, p)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only descriptor: ReadLimited reports read errors
	return store.ReadLimited(f, key, fi.Size(), max)
}

// openObject opens the file of key at p for reading, refusing anything but
// a regular file without waiting on it or reading it (openNoFollow), and
// returns it with its information from the descriptor. A missing file and
// a directory are store.ErrNotFound; a symbolic link, FIFO, device or
// socket is store.ErrNotRegular.
func openObject(key, p string) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, nil, openError(key, p, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			err = fmt.Errorf("%s: %w", key, store.ErrNotFound)
		} else {
			err = store.NotRegular(p, fi.Mode())
		}
	}
	if err != nil {
		f.Close() //nolint:errcheck // nothing was read; err is the one to report
		return nil, nil, err
	}
	return f, fi, nil
}

// openError explains why opening the file of key at p failed: because it
// is not a regular file or directory (a symbolic link at p fails an open
// that does not follow it), else as notFound does.
func openError(key, p string, err error) error {
	if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return store.NotRegular(p, fi.Mode())
	}
	return notFound(key, err)
}

// GetRange reads length bytes at offset; a short object is an error.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	return store.GetRangeByReading(ctx, s, key, offset, length)
}

// Stat returns the object's size, mtime and version. The key's file
// itself is looked at (a symbolic link is store.ErrNotRegular, not its
// target), and a FIFO or device is never opened.
func (s *Store) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.ObjectInfo{}, err
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return store.ObjectInfo{}, notFound(key, err)
	case fi.IsDir():
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, store.ErrNotFound)
	case !fi.Mode().IsRegular():
		return store.ObjectInfo{}, store.NotRegular(p, fi.Mode())
	}
	return objectInfo(key, p, fi)
}

// Put writes data under key, atomically, honouring opts.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	if err := store.CheckPutOptions(s.Capabilities(), opts); err != nil {
		return store.ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.ObjectInfo{}, err
	}
	dir := filepath.Dir(p)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	// The temp file is removed on every path: after createNew it is a
	// second name for the object (or gone), after replace it is gone.
	// A temp file left by a failed removal is harmless: prune deletes those
	// older than a day.
	defer os.Remove(tmp) //nolint:errcheck // see above; after a rename it is gone

	switch {
	case opts.IfAbsent:
		if err := createNew(tmp, p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, store.ErrExists)
			}
			return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
		}
	case opts.IfVersion != "":
		if err := s.swap(ctx, tmp, p, key, opts.IfVersion); err != nil {
			return store.ObjectInfo{}, err
		}
	default:
		if err := replace(ctx, tmp, p); err != nil {
			return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: stat after write: %w", key, err)
	}
	return objectInfo(key, p, fi)
}

// swap renames tmp onto p if p's current version is want, under the store's
// CAS lock so that no other swap or delete interleaves.
func (s *Store) swap(ctx context.Context, tmp, p, key, want string) error {
	unlock, err := s.lockCAS()
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: object is gone: %w", key, store.ErrVersionMismatch)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		// Not a file a Put wrote, so not the version the caller holds.
		return fmt.Errorf("%s: %w: %w", key, store.ErrVersionMismatch, store.NotRegular(p, fi.Mode()))
	}
	cur, err := objectInfo(key, p, fi)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: object is gone: %w", key, store.ErrVersionMismatch)
	}
	if errors.Is(err, store.ErrNotRegular) {
		return fmt.Errorf("%s: %w: %w", key, store.ErrVersionMismatch, err)
	}
	if err != nil {
		return err
	}
	if got := cur.Version; got != want {
		return fmt.Errorf("%s: have %s, want %s: %w", key, got, want, store.ErrVersionMismatch)
	}
	if err := replace(ctx, tmp, p); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// lockCAS takes an exclusive lock (lockFile: flock on Unix, LockFileEx on
// Windows) on ROOT/.cas.lock. Each call opens its own file, so goroutines
// of one process exclude each other too.
func (s *Store) lockCAS() (func(), error) {
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.root, ".cas.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close() //nolint:errcheck // nothing was written; the lock error is the one to report
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() {
		unlock()
		// Nothing was written through f; closing it also releases the lock.
		f.Close() //nolint:errcheck // see above
	}, nil
}

// writeTemp writes data to a new uniquely named file in dir and fsyncs it.
func writeTemp(dir string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := filepath.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	werr := writeData(f, data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name) //nolint:errcheck // already failing; the write error matters
		return "", err
	}
	return name, nil
}

// Delete removes the object (under the CAS lock, so it cannot interleave
// with a compare-and-swap of the same key).
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := s.lockCAS()
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	if err := os.Remove(p); err != nil {
		return notFound(key, err)
	}
	return syncDir(filepath.Dir(p))
}
