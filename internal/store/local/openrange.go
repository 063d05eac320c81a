package local

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cloudstic/cloudstic/internal/store"
)

var _ store.RangeOpener = (*Store)(nil)

// OpenRange streams the length bytes of key at offset from its file,
// opened and checked like a whole object (openObject: a missing file is
// store.ErrNotFound, anything but a regular file store.ErrNotRegular). A
// range past the end of the file is refused at once, with an error
// wrapping io.ErrUnexpectedEOF (not ErrNotFound); a file that shrinks
// while it is read ends the stream with one. Close closes the file.
func (s *Store) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := openObject(key, p)
	if err != nil {
		return nil, err
	}
	if size := fi.Size(); offset > size || length > size-offset {
		f.Close() //nolint:errcheck // read-only; nothing was read
		return nil, fmt.Errorf("%s: range %d+%d beyond end of object (%d bytes): %w",
			key, offset, length, size, io.ErrUnexpectedEOF)
	}
	return store.ExactRange(&fileRange{ctx: ctx, r: io.NewSectionReader(f, offset, length), f: f}, key, length), nil
}

// fileRange reads a section of an open file while ctx lasts, and closes
// the file on Close.
type fileRange struct {
	ctx context.Context
	r   *io.SectionReader
	f   *os.File
}

func (r *fileRange) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func (r *fileRange) Close() error { return r.f.Close() }
