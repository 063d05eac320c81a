//go:build unix

package local

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/store"
)

// readRange fills buf from the file of key at p, from offset. The file is
// opened and read with plain system calls (see openRead): os.Open also
// makes the descriptor non-blocking and offers it to the network poller
// (two more calls, for a regular file), per read.
func readRange(key, p string, offset int64, buf []byte) error {
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
