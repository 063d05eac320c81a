package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/store"
)

// path returns the remote path of key.
func (s *Store) path(key string) (string, error) {
	if err := store.CheckKey(key); err != nil {
		return "", err
	}
	return path.Join(s.root, key), nil
}

// notFound wraps store.ErrNotFound for a missing file; other errors pass.
func notFound(key string, err error) error {
	if isNotExist(err) {
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// info converts a remote FileInfo.
func info(key string, fi fs.FileInfo) store.ObjectInfo {
	return store.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), Version: version(fi)}
}

// version is "<size>-<mtime>" in hex: enough to tell most writes apart, not
// a basis for compare-and-swap (mtimes have one-second resolution).
func version(fi fs.FileInfo) string {
	return fmt.Sprintf("%x-%x", fi.Size(), fi.ModTime().Unix())
}

// errIsDir marks an open file that turned out to be a directory.
var errIsDir = errors.New("is a directory")

// Get reads the whole object, with the client's concurrent reads, if it is
// a regular file of at most max bytes. The server's lstat of the name
// tells both before the file is opened (so a FIFO is never opened and a
// symbolic link never followed), its fstat of the open file both again:
// the name may have been given to a new file in between (a rewritten lock
// object), which is the one read.
func (s *Store) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = s.do(ctx, func(c *sftp.Client) error {
		fi, err := c.Lstat(p)
		if err != nil {
			return err
		}
		if err := regularOfSize(key, p, fi, max); err != nil {
			return err
		}
		f, err := c.Open(p)
		if err != nil {
			return err
		}
		defer f.Close() //nolint:errcheck // read-only handle; the read's error matters
		if fi, err = f.Stat(); err != nil {
			return err
		}
		if err := regularOfSize(key, p, fi, max); err != nil {
			return err
		}
		data, err = store.ReadLimited(f, key, fi.Size(), max)
		return err
	})
	switch {
	case errors.Is(err, errIsDir):
		return nil, fmt.Errorf("%s: %w", key, store.ErrNotFound)
	case errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrNotRegular):
		return nil, fmt.Errorf("sftp: %w", err)
	case err != nil:
		return nil, notFound(key, err)
	}
	return data, nil
}

// regularOfSize checks what the server says of the file of key at p: a
// directory is errIsDir, anything else but a regular file
// store.ErrNotRegular, a file over max store.ErrTooLarge.
func regularOfSize(key, p string, fi fs.FileInfo, max int64) error {
	switch {
	case fi.IsDir():
		return errIsDir
	case !fi.Mode().IsRegular():
		return store.NotRegular(p, fi.Mode())
	}
	return store.CheckSize(key, fi.Size(), max)
}

// dirOr returns errIsDir if f is a directory (opening one succeeds on
// OpenSSH; reading it fails), else err.
func dirOr(f *sftp.File, err error) error {
	if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
		return errIsDir
	}
	return err
}

// GetRange reads length bytes at offset; a short object is an error, not
// store.ErrNotFound.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	return store.GetRangeByReading(ctx, s, key, offset, length)
}

// ReadRange fills buf with the len(buf) bytes of key at offset; a short
// object is an error, not store.ErrNotFound.
func (s *Store) ReadRange(ctx context.Context, key string, offset int64, buf []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%s: invalid range %d+%d", key, offset, len(buf))
	}
	var n int
	err = s.do(ctx, func(c *sftp.Client) error {
		f, err := c.Open(p)
		if err != nil {
			return err
		}
		defer f.Close() //nolint:errcheck // read-only handle; the read's error matters
		n, err = f.ReadAt(buf, offset)
		if errors.Is(err, io.EOF) {
			return nil // short read, reported below
		}
		if err != nil {
			return dirOr(f, err)
		}
		return nil
	})
	if errors.Is(err, errIsDir) {
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return notFound(key, err)
	}
	if n < len(buf) {
		return fmt.Errorf("%s: range %d+%d beyond end of object (%d bytes read): %w",
			key, offset, len(buf), n, io.ErrUnexpectedEOF)
	}
	return nil
}

// Stat returns the object's size, mtime and version. The name itself is
// looked at: a symbolic link is store.ErrNotRegular, not its target.
func (s *Store) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return store.ObjectInfo{}, err
	}
	var fi os.FileInfo
	err = s.do(ctx, func(c *sftp.Client) error {
		fi, err = c.Lstat(p)
		return err
	})
	switch {
	case err != nil:
		return store.ObjectInfo{}, notFound(key, err)
	case fi.IsDir():
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, store.ErrNotFound)
	case !fi.Mode().IsRegular():
		return store.ObjectInfo{}, fmt.Errorf("sftp: %w", store.NotRegular(p, fi.Mode()))
	}
	return info(key, fi), nil
}

// Delete removes the object. If the connection drops during the removal and
// the retry finds the key gone, the removal is taken to have happened.
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	attempt := 0
	err = s.do(ctx, func(c *sftp.Client) error {
		attempt++
		fi, err := c.Lstat(p)
		if isNotExist(err) && attempt > 1 {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return errIsDir // sftp's Remove would remove an empty directory
		}
		err = c.Remove(p)
		if isNotExist(err) && attempt > 1 {
			return nil
		}
		return err
	})
	if errors.Is(err, errIsDir) {
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return notFound(key, err)
	}
	return nil
}

// List walks the deepest directory that holds every key with prefix,
// skipping names that start with ".". Each directory read is retried once
// on a new connection if the connection drops; fn is never repeated.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	dirKey := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirKey = prefix[:i]
		if err := store.CheckKey(dirKey); err != nil {
			return err
		}
	}
	return s.walk(ctx, dirKey, prefix, fn)
}

// walk lists the directory of dirKey ("" is the root) and recurses into
// subdirectories that can hold keys with prefix.
func (s *Store) walk(ctx context.Context, dirKey, prefix string, fn func(store.ObjectInfo) error) error {
	dir := path.Join(s.root, dirKey)
	var entries []os.FileInfo
	err := s.do(ctx, func(c *sftp.Client) error {
		var err error
		entries, err = c.ReadDirContext(ctx, dir)
		return err
	})
	if isNotExist(err) {
		return nil // no such directory, or removed while we walked
	}
	if err != nil {
		if fi, serr := s.statDir(ctx, dir); serr == nil && !fi.IsDir() {
			return nil // a key, not a directory: nothing below it
		}
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, fi := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := fi.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		key := name
		if dirKey != "" {
			key = dirKey + "/" + name
		}
		if fi.IsDir() {
			if strings.HasPrefix(key+"/", prefix) || strings.HasPrefix(prefix, key+"/") {
				if err := s.walk(ctx, key, prefix, fn); err != nil {
					return err
				}
			}
			continue
		}
		if fi.Mode().IsRegular() && strings.HasPrefix(key, prefix) {
			if err := fn(info(key, fi)); err != nil {
				return err
			}
		}
	}
	return nil
}

// statDir stats a remote path (used to explain a failed directory read).
func (s *Store) statDir(ctx context.Context, dir string) (os.FileInfo, error) {
	var fi os.FileInfo
	err := s.do(ctx, func(c *sftp.Client) error {
		var err error
		fi, err = c.Stat(dir)
		return err
	})
	return fi, err
}

// Now writes an empty temporary file in the store's root and returns its
// mtime: the server's clock (to the second, as SFTP v3 reports it) at a
// moment before the answer arrived. The file is removed again.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var fi os.FileInfo
	err := s.do(ctx, func(c *sftp.Client) error {
		tmp, err := s.writeTemp(c, s.root, nil)
		if err != nil {
			return err
		}
		defer removeTemp(c, tmp)
		fi, err = c.Stat(tmp)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("sftp: reading the server's time on %s: %w", s.Describe(), err)
	}
	return fi.ModTime(), nil
}
