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
	"strings"
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

// Get reads the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		if isDirError(err) {
			return nil, fmt.Errorf("%s: %w", key, store.ErrNotFound)
		}
		return nil, notFound(key, err)
	}
	return data, nil
}

func isDirError(err error) bool { return errors.Is(err, syscall.EISDIR) }

// GetRange reads length bytes at offset; a short object is an error.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	return store.GetRangeByReading(ctx, s, key, offset, length)
}

// Stat returns the object's size, mtime and version.
func (s *Store) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.ObjectInfo{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return store.ObjectInfo{}, notFound(key, err)
	}
	if fi.IsDir() {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, store.ErrNotFound)
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
	// The temp file is removed on every path: after link(2) it is a second
	// name for the object, after rename(2) it no longer exists.
	// A temp file left by a failed removal is harmless: prune deletes those
	// older than a day.
	defer os.Remove(tmp) //nolint:errcheck // see above; after rename(2) it is gone

	switch {
	case opts.IfAbsent:
		if err := os.Link(tmp, p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, store.ErrExists)
			}
			return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
		}
	case opts.IfVersion != "":
		if err := s.swap(tmp, p, key, opts.IfVersion); err != nil {
			return store.ObjectInfo{}, err
		}
	default:
		if err := os.Rename(tmp, p); err != nil {
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
func (s *Store) swap(tmp, p, key, want string) error {
	unlock, err := s.lockCAS()
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: object is gone: %w", key, store.ErrVersionMismatch)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	cur, err := objectInfo(key, p, fi)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: object is gone: %w", key, store.ErrVersionMismatch)
	}
	if err != nil {
		return err
	}
	if got := cur.Version; got != want {
		return fmt.Errorf("%s: have %s, want %s: %w", key, got, want, store.ErrVersionMismatch)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// lockCAS takes an exclusive flock on ROOT/.cas.lock. Each call opens its own
// file description, so goroutines of one process exclude each other too.
func (s *Store) lockCAS() (func(), error) {
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.root, ".cas.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close() //nolint:errcheck // nothing was written; the flock error is the one to report
		return nil, fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return func() {
		// Closing the descriptor releases the flock, even when close(2)
		// reports an error; nothing was written through it.
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

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // a directory handle: Sync is what makes the entry durable
	return d.Sync()
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

// List walks the deepest directory that contains every key with prefix.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	dirKey := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirKey = prefix[:i]
	}
	start := s.root
	if dirKey != "" {
		if err := store.CheckKey(dirKey); err != nil {
			return err
		}
		start = filepath.Join(s.root, filepath.FromSlash(dirKey))
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == start {
			if !d.IsDir() {
				return fs.SkipAll
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			// Skip subtrees that cannot hold a key with this prefix.
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		oi, err := objectInfo(key, p, fi)
		if errors.Is(err, store.ErrNotFound) {
			return nil // removed while we listed
		}
		if err != nil {
			return err
		}
		return fn(oi)
	})
	return err
}

var _ store.TempCleaner = (*Store)(nil)

// RemoveStaleTemp deletes temp files (".tmp-*", left by a crash between
// writing and renaming) last modified before cutoff.
func (s *Store) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	removed := 0
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}
