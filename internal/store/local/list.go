package local

import (
	"context"
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

// List walks the deepest directory that contains every key with prefix.
//
// The directories of keys below the root (snapshots/, index/packs/,
// data/ab/, ...) must be real directories: one that is a symbolic link or
// not a directory at all is store.ErrNotDirectory naming it, never an
// empty listing, which would make a repository's snapshots or packs
// silently disappear. The root itself may be a symbolic link (a user's
// /backup pointing at a mounted disk). Any other entry that is not a
// regular file (a symbolic link to a file, a FIFO, a device) is listed
// like an object, so that the caller sees it; reading it is
// store.ErrNotRegular, deleting it works.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	dirKey := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirKey = prefix[:i]
		if err := store.CheckKey(dirKey); err != nil {
			return err
		}
	}
	exists, err := s.checkDirs(dirKey)
	if err != nil || !exists {
		return err
	}
	return s.walk(ctx, dirKey, prefix, fn)
}

// checkDirs looks at each directory on the way from the root to dirKey
// ("" is the root) without following symbolic links. It reports false when
// one is missing (nothing to list), and store.ErrNotDirectory for one that
// is a symbolic link or not a directory.
func (s *Store) checkDirs(dirKey string) (bool, error) {
	if dirKey == "" {
		return true, nil
	}
	p := s.root
	for _, elem := range strings.Split(dirKey, "/") {
		p = filepath.Join(p, elem)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.IsDir() {
			return false, store.NotDirectory(p, fi.Mode())
		}
	}
	return true, nil
}

// walk lists the directory of dirKey and recurses into the subdirectories
// that can hold keys with prefix, in name order.
func (s *Store) walk(ctx context.Context, dirKey, prefix string, fn func(store.ObjectInfo) error) error {
	dir := filepath.Join(s.root, filepath.FromSlash(dirKey))
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // no store yet, or removed while we walked
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s: %w", dir, store.ErrNotDirectory)
	case err != nil:
		return err
	}
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			continue // the store's own files: temp files, .cas.lock
		}
		key := name
		if dirKey != "" {
			key = dirKey + "/" + name
		}
		// Whether key can be, or be a directory of, a key with prefix.
		if !strings.HasPrefix(key, prefix) && !strings.HasPrefix(prefix, key+"/") {
			continue
		}
		p := filepath.Join(dir, name)
		if d.IsDir() {
			if err := s.walk(ctx, key, prefix, fn); err != nil {
				return err
			}
			continue
		}
		oi, ok, err := s.entryInfo(key, p, d)
		if err != nil {
			return err
		}
		if ok && strings.HasPrefix(key, prefix) {
			if err := fn(oi); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryInfo describes a listed entry that is not a directory; ok is false
// when it was removed while we listed. A symbolic link to a directory is
// store.ErrNotDirectory.
func (s *Store) entryInfo(key, p string, d fs.DirEntry) (store.ObjectInfo, bool, error) {
	fi, err := d.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return store.ObjectInfo{}, false, nil
	}
	if err != nil {
		return store.ObjectInfo{}, false, err
	}
	if !fi.Mode().IsRegular() {
		if target, err := os.Stat(p); err == nil && target.IsDir() {
			return store.ObjectInfo{}, false, store.NotDirectory(p, fi.Mode())
		}
		// Listed so that callers see it (reading it fails, naming it).
	}
	// The coarse version, from the directory entry alone: a listing never
	// reads the objects it names. Hashing each small object's content, as
	// Stat does for compare-and-swap, made every listing of snapshots/ or
	// data/ read every object under 64 KiB (every snapshot, every small
	// tree pack) just to fill in a field no caller of List compares.
	return store.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), Version: coarseVersion(fi)}, true, nil
}

var _ store.TempCleaner = (*Store)(nil)

// RemoveStaleTemp deletes temp files (".tmp-*", left by a crash between
// writing and renaming) last modified before cutoff.
func (s *Store) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	removed := 0
	// WalkDir does not descend into a root that is a symbolic link.
	root, err := filepath.EvalSymlinks(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
