package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
)

var _ store.RangeOpener = (*Store)(nil)

// OpenRange streams the length bytes of key at offset from the remote
// file, opened like ReadRange opens it (a missing file or a directory is
// store.ErrNotFound) and read with the client's ReadAt as the caller
// reads. A range past the end of the file (by the open file's size) is
// refused at once with an error wrapping io.ErrUnexpectedEOF; a file that
// shrinks while it is read ends the stream with one. If ctx ends while a
// Read is in flight, the connection is closed so that the Read returns,
// as for every other operation (run). Close closes the remote file.
func (s *Store) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	var f *sftp.File
	var conn *sshconn.Conn
	err = s.doConn(ctx, func(c *sshconn.Conn) error {
		var err error
		if f, err = c.SFTP.Open(p); err != nil {
			return err
		}
		fi, err := f.Stat()
		switch {
		case err != nil:
		case fi.IsDir():
			err = errIsDir
		case offset > fi.Size() || length > fi.Size()-offset:
			err = fmt.Errorf("%s: range %d+%d beyond end of object (%d bytes): %w",
				key, offset, length, fi.Size(), io.ErrUnexpectedEOF)
		}
		if err != nil {
			f.Close() //nolint:errcheck // read-only handle; err is the one to report
			return err
		}
		conn = c
		return nil
	})
	switch {
	case errors.Is(err, errIsDir):
		return nil, fmt.Errorf("%s: %w", key, store.ErrNotFound)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("sftp: %w", err)
	case err != nil:
		return nil, notFound(key, err)
	}
	r := &remoteRange{s: s, ctx: ctx, c: conn, key: key, f: f, r: io.NewSectionReader(f, offset, length)}
	return store.ExactRange(r, key, length), nil
}

// remoteRange reads a section of an open remote file while ctx lasts.
type remoteRange struct {
	s    *Store
	ctx  context.Context
	c    *sshconn.Conn
	key  string
	f    *sftp.File
	r    *io.SectionReader
	once sync.Once
	err  error
}

func (r *remoteRange) Read(p []byte) (int, error) {
	var n int
	err := r.s.run(r.ctx, r.c, func(*sftp.Client) error {
		var err error
		n, err = r.r.Read(p)
		return err
	})
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		err = fmt.Errorf("sftp: read range %s: %w", r.key, err)
	}
	return n, err
}

func (r *remoteRange) Close() error {
	r.once.Do(func() { r.err = r.f.Close() })
	return r.err
}
