package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/store"
)

var _ store.RangeReader = (*Store)(nil)

// ReadRange fills buf with the len(buf) bytes of key at offset; a short
// object is an error, and so is anything but a regular file (see
// openRead). The file is opened and read with plain system calls:
// os.Open also makes the descriptor non-blocking and offers it to the
// network poller (two more calls, for a regular file), per read.
func (s *Store) ReadRange(ctx context.Context, key string, offset int64, buf []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%s: invalid range %d+%d", key, offset, len(buf))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fd, err := openRead(key, p)
	if err != nil {
		return err
	}
	defer unix.Close(fd) //nolint:errcheck // read-only; pread reports read errors
	for n := 0; n < len(buf); {
		m, err := unix.Pread(fd, buf[n:], offset+int64(n))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case isDirError(err):
			return fmt.Errorf("%s: %w", key, store.ErrNotFound)
		case err != nil:
			return &os.PathError{Op: "read", Path: p, Err: err}
		case m == 0:
			return fmt.Errorf("%s: range %d+%d beyond end of object: %w", key, offset, len(buf), io.ErrUnexpectedEOF)
		}
		n += m
	}
	return nil
}
