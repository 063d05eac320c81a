//go:build windows

package local

import (
	"errors"
	"fmt"
	"io"
)

// readRange fills buf from the file of key at p, from offset, opened and
// checked like a whole object (openObject: a regular file, never a
// reparse point's target).
func readRange(key, p string, offset int64, buf []byte) error {
	f, _, err := openObject(key, p)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only; ReadAt reports read errors
	if _, err := f.ReadAt(buf, offset); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: range %d+%d beyond end of object: %w", key, offset, len(buf), io.ErrUnexpectedEOF)
		}
		return err
	}
	return nil
}
