package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
//
// A Read that fails because the connection was lost is tried once more,
// as every other operation is (do): on a new connection, on the file
// opened again, at the byte the stream had reached. The file must still
// have the size and modification time it had when the stream was opened
// (else store.ErrChanged); a file gone by then is store.ErrNotFound.
func (s *Store) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	var f *sftp.File
	var fi fs.FileInfo
	var conn *sshconn.Conn
	err = s.doConn(ctx, func(c *sshconn.Conn) error {
		var err error
		if f, fi, err = openRange(c.SFTP, p, key, offset, length); err == nil {
			conn = c
		}
		return err
	})
	if err != nil {
		return nil, openErr(key, err)
	}
	r := &remoteRange{s: s, ctx: ctx, c: conn, key: key, path: p, f: f, fi: fi, off: offset, end: offset + length}
	return store.ExactRange(r, key, length), nil
}

// openRange opens the file at p and checks that it is not a directory and
// holds the range.
func openRange(c *sftp.Client, p, key string, offset, length int64) (*sftp.File, fs.FileInfo, error) {
	f, err := c.Open(p)
	if err != nil {
		return nil, nil, err
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
		return nil, nil, err
	}
	return f, fi, nil
}

// openErr is the error of a failed (re)opening of key.
func openErr(key string, err error) error {
	switch {
	case errors.Is(err, errIsDir):
		return fmt.Errorf("%s: %w", key, store.ErrNotFound)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, store.ErrChanged):
		return fmt.Errorf("sftp: %w", err)
	}
	return notFound(key, err)
}

// remoteRange reads the bytes [off, end) of an open remote file while ctx
// lasts, reopening it on a new connection when the connection is lost.
// Read and Close are not called at once (io.ReadCloser).
type remoteRange struct {
	s    *Store
	ctx  context.Context
	key  string
	path string
	fi   fs.FileInfo // the file as it was opened

	c        *sshconn.Conn // the connection f is open on
	f        *sftp.File
	off, end int64 // the next byte to read, the end of the range

	once sync.Once
	err  error
}

func (r *remoteRange) Read(p []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	if rest := r.end - r.off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.readAt(p)
	if n == 0 && r.lost(err) && r.mayRetry() {
		if rerr := r.resume(); rerr != nil {
			// The read's error only says the connection was lost, and
			// may be io.EOF, which store.ExactRange would take for the
			// end of the file: the reopening's error is the one to test.
			return 0, fmt.Errorf("sftp: read range %s: %v; reopening it: %w", r.key, err, rerr)
		}
		n, err = r.readAt(p)
	}
	if n > 0 && r.lost(err) {
		// The bytes before the failure are good; the next Read goes on
		// after them.
		err = nil
	}
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		err = fmt.Errorf("sftp: read range %s: %w", r.key, err)
	}
	return n, err
}

// readAt reads p at off on the current connection and moves off past the
// bytes read.
func (r *remoteRange) readAt(p []byte) (int, error) {
	var n int
	err := r.s.run(r.ctx, r.c, func(*sftp.Client) error {
		var err error
		n, err = r.f.ReadAt(p, r.off)
		return err
	})
	r.off += int64(n)
	return n, err
}

func (r *remoteRange) Close() error {
	r.once.Do(func() { r.err = r.f.Close() })
	return r.err
}
