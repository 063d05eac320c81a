package sftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/store"
)

// Put writes data under key atomically (temp file, then rename or hard
// link), honouring opts.
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
	if opts.IfAbsent {
		return s.create(ctx, key, p, data)
	}
	var fi os.FileInfo
	// Writing a new temp file and renaming it over the key is safe to repeat.
	err = s.do(ctx, func(c *sftp.Client) error {
		tmp, err := s.writeTemp(c, path.Dir(p), data)
		if err != nil {
			return err
		}
		if err := c.PosixRename(tmp, p); err != nil {
			removeTemp(c, tmp)
			return err
		}
		fi, err = c.Stat(p)
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	return info(key, fi), nil
}

// create is the create-if-absent Put: the data is written to a temp file
// completely, then hard-linked to the key, which fails if the key exists.
// If the connection drops during the link, its outcome is learnt (see
// linkedTo) before anything is retried.
func (s *Store) create(ctx context.Context, key, p string, data []byte) (store.ObjectInfo, error) {
	var tmp string
	err := s.do(ctx, func(c *sftp.Client) error {
		var err error
		tmp, err = s.writeTemp(c, path.Dir(p), data)
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	c, err := s.current(ctx)
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	err = s.run(ctx, c, func(sc *sftp.Client) error { return linkNew(sc, tmp, p) })
	if lost(c, err) && ctx.Err() == nil {
		c, err = s.reconnect(ctx, c)
		if err == nil {
			err = s.run(ctx, c, func(sc *sftp.Client) error { return relink(sc, tmp, p) })
		}
	}
	var fi os.FileInfo
	if err == nil {
		err = s.do(ctx, func(sc *sftp.Client) error {
			var serr error
			fi, serr = sc.Stat(p)
			return serr
		})
	}
	if ctx.Err() == nil {
		// The temp file is a second name of the object or an orphan;
		// removal is best effort and invisible to readers either way.
		_ = s.do(ctx, func(sc *sftp.Client) error { removeTemp(sc, tmp); return nil })
	}
	if err != nil {
		return store.ObjectInfo{}, fmt.Errorf("%s: %w", key, err)
	}
	return info(key, fi), nil
}

// errLinkOutcome: a lost hard link could not be classified.
var errLinkOutcome = errors.New("create-if-absent: outcome of the interrupted hard link is unknown")

// relink finishes a create whose link request was lost with the connection:
// if the key now is our temp file, the link happened; if the key is absent,
// the link is retried; otherwise the key was created by someone else.
func relink(c *sftp.Client, tmp, p string) error {
	ours, err := linkedTo(c, tmp, p)
	switch {
	case err == nil && ours:
		return nil
	case isNotExist(err):
		return linkNew(c, tmp, p)
	case err == nil:
		return store.ErrExists
	default:
		return fmt.Errorf("%w: %w", errLinkOutcome, err)
	}
}

// linkNew links tmp to p, reporting store.ErrExists when p exists. pkg/sftp
// returns a generic failure for an existing target, so a Stat tells "exists"
// apart from other failures.
func linkNew(c *sftp.Client, tmp, p string) error {
	var err error
	// A key that existed when the link failed may be gone by the time we
	// look (a lock released in between): then the link is simply tried
	// again, a bounded number of times.
	for attempt := 0; attempt < linkAttempts; attempt++ {
		if err = c.Link(tmp, p); err == nil {
			return nil
		}
		_, serr := c.Lstat(p)
		if serr == nil {
			return store.ErrExists
		}
		if !isNotExist(serr) {
			break
		}
		if isNotExist(err) {
			// The key's directory exists (the temp file is in it), so a
			// missing file here is the temp file: not "the key is absent".
			return fmt.Errorf("hard link: temp file vanished: %v", err)
		}
	}
	return fmt.Errorf("hard link: %w", err)
}

// linkAttempts bounds the retries of linkNew when the target comes and goes.
const linkAttempts = 5

// linkedTo reports whether p is the same file as tmp. SFTP v3 shows no inode
// numbers, so it sets tmp's mtime to a marker value and looks whether p's
// mtime changed with it, then restores the mtime. An absent p gives an
// error satisfying isNotExist.
func linkedTo(c *sftp.Client, tmp, p string) (bool, error) {
	target, err := c.Stat(p)
	if err != nil {
		return false, err
	}
	orig, err := c.Stat(tmp)
	if err != nil {
		return false, fmt.Errorf("temp file: %v", err) // not "absent": the key exists
	}
	if !target.ModTime().Equal(orig.ModTime()) || target.Size() != orig.Size() {
		return false, nil
	}
	marker := orig.ModTime().Add(-time.Hour)
	if err := c.Chtimes(tmp, marker, marker); err != nil {
		return false, fmt.Errorf("mark temp file: %v", err)
	}
	after, err := c.Stat(p)
	if rerr := c.Chtimes(tmp, orig.ModTime(), orig.ModTime()); rerr != nil && err == nil {
		err = fmt.Errorf("restore mtime: %v", rerr)
	}
	if err != nil {
		return false, fmt.Errorf("probe: %v", err)
	}
	return after.ModTime().Equal(marker), nil
}

// writeTemp writes data to a new uniquely named file in dir (created if
// missing), fsyncs it where the server can, and returns its path.
func (s *Store) writeTemp(c *sftp.Client, dir string, data []byte) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := path.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	f, err := c.OpenFile(name, flags)
	if isNotExist(err) {
		if err := c.MkdirAll(dir); err != nil {
			return "", fmt.Errorf("mkdir %s: %w", dir, err)
		}
		f, err = c.OpenFile(name, flags)
	}
	if err != nil {
		return "", fmt.Errorf("create temp file: %w", err)
	}
	_, werr := f.ReadFrom(bytes.NewReader(data))
	var serr error
	if werr == nil && s.fsync {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		removeTemp(c, name)
		return "", fmt.Errorf("write temp file: %w", err)
	}
	return name, nil
}

// removeTemp removes a temp file, best effort: leftovers start with "." and
// are invisible to List and Get.
func removeTemp(c *sftp.Client, name string) {
	_ = c.Remove(name) // best effort, see above
}
