package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// Source reads a tree on an SFTP server. It is safe for concurrent use.
type Source struct {
	cfg  sshconn.Config
	conn *sshconn.Conn
	home string // the login directory
}

var _ source.Source = (*Source)(nil)

// Open connects to the server cfg names. The caller closes the Source.
func Open(ctx context.Context, cfg sshconn.Config) (*Source, error) {
	conn, err := sshconn.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	home, err := conn.SFTP.Getwd()
	if err != nil {
		_ = conn.Close() // already failing
		return nil, fmt.Errorf("login directory on %s: %w", cfg.Addr(), err)
	}
	if cfg.Port == sshconn.DefaultPort {
		cfg.Port = 0 // snapshots name the source the same with or without :22
	}
	return &Source{cfg: cfg, conn: conn, home: home}, nil
}

// Root resolves name, a path as sshconn.ParseURL gives it (absolute, or
// relative to the login directory), following it if it is a symlink.
// Root.URI is the sftp:// URL of the absolute path.
func (s *Source) Root(ctx context.Context, name string) (source.Root, error) {
	abs := name
	if !path.IsAbs(abs) {
		abs = path.Join(s.home, abs)
	}
	abs = path.Clean(abs)
	if err := ctx.Err(); err != nil {
		return source.Root{}, err
	}
	real, err := s.conn.SFTP.RealPath(abs)
	if err != nil {
		return source.Root{}, fmt.Errorf("%s: %w", abs, s.fail(err))
	}
	fi, err := s.Lstat(ctx, real)
	if err != nil {
		return source.Root{}, fmt.Errorf("%s: %w", abs, err)
	}
	if !fi.IsDir() {
		return source.Root{}, fmt.Errorf("%s: %w", abs, source.ErrNotDir)
	}
	return source.Root{Path: abs, Real: real, URI: s.cfg.URL(abs), Info: fi}, nil
}

// Lstat describes the entry at p.
func (s *Source) Lstat(ctx context.Context, p string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := s.conn.SFTP.Lstat(p)
	if err != nil {
		return nil, s.fail(err)
	}
	return newFileInfo(fi), nil
}

// ReadDir lists the directory p, sorted by name. The server's listing
// carries each entry's lstat attributes, so Info costs nothing more.
func (s *Source) ReadDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	list, err := s.conn.SFTP.ReadDirContext(ctx, p)
	if err != nil {
		return nil, s.fail(err)
	}
	entries := make([]fs.DirEntry, len(list))
	for i, fi := range list {
		entries[i] = fs.FileInfoToDirEntry(newFileInfo(fi))
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// Open opens the file p for reading. Backup opens only entries listed as
// regular files: OpenSSH's server opens without O_NONBLOCK, so a file
// replaced by a FIFO in between would stall the session until the
// keepalive watchdog (sshconn.Config.ResponseTimeout) closes it.
func (s *Source) Open(ctx context.Context, p string) (source.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := s.conn.SFTP.Open(p)
	if err != nil {
		return nil, s.fail(err)
	}
	return &file{s: s, f: f}, nil
}

// Readlink returns the target of the symlink p.
func (s *Source) Readlink(ctx context.Context, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	target, err := s.conn.SFTP.ReadLink(p)
	if err != nil {
		return "", s.fail(err)
	}
	return target, nil
}

// Xattrs returns none: SFTP version 3 has no extended attributes.
func (s *Source) Xattrs(context.Context, string) ([]source.Xattr, error) { return nil, nil }

// TimeGranularity is a second: SFTP version 3 sends whole seconds.
func (s *Source) TimeGranularity() time.Duration { return time.Second }

// Close ends the connection.
func (s *Source) Close() error { return s.conn.Close() }

// fail wraps err, the failure of an operation: source.ErrLost when the
// connection is gone (pkg/sftp reports a request sent on a closed channel
// as io.EOF, which no operation but a read returns otherwise). Callers
// name the path, as they do for the local file system's errors.
func (s *Source) fail(err error) error {
	if s.conn.Lost(err) {
		return fmt.Errorf("%w: connection to %s: %w", source.ErrLost, s.cfg.Addr(), err)
	}
	return err
}

// file is an open remote file whose errors say when the connection is
// lost.
type file struct {
	s *Source
	f *sftp.File
}

// Read reads from the file. At the end of the file the connection is
// checked with one more request: a read sent on a connection that just
// dropped is also reported as io.EOF, which must not pass for the file's
// end.
func (f *file) Read(b []byte) (int, error) {
	n, err := f.f.Read(b)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		_, perr := f.s.conn.SFTP.Getwd()
		if perr == nil && (f.s.conn.IsDead() || f.s.conn.Closed()) {
			perr = err
		}
		if perr != nil {
			return n, fmt.Errorf("%w: connection to %s: %w", source.ErrLost, f.s.cfg.Addr(), perr)
		}
		return n, err
	}
	return n, f.s.fail(err)
}

// Seek sets the offset of the next Read.
func (f *file) Seek(offset int64, whence int) (int64, error) {
	n, err := f.f.Seek(offset, whence)
	if err != nil {
		return n, f.s.fail(err)
	}
	return n, nil
}

// Stat describes the open file.
func (f *file) Stat() (fs.FileInfo, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return nil, f.s.fail(err)
	}
	return newFileInfo(fi), nil
}

// Close closes the remote file handle.
func (f *file) Close() error { return f.f.Close() }
