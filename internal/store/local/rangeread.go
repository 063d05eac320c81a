package local

import (
	"context"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/store"
)

var _ store.RangeReader = (*Store)(nil)

// ReadRange fills buf with the len(buf) bytes of key at offset; a short
// object is an error, and so is anything but a regular file (see
// openObject). The reading itself is readRange's, per platform.
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
	return readRange(key, p, offset, buf)
}
