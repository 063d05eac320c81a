package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// RangeOpener is implemented by stores that can stream a range of an
// object: its bytes arrive as the caller reads them. A reader of a large
// range then needs memory for what it handles at a time (a restore: one
// chunk), not for the whole range, and works on the first bytes while the
// rest are on their way: over a network, one request per pack instead of
// one per buffer's worth. Wrappers forward it, or do not declare it.
type RangeOpener interface {
	// OpenRange returns a reader of the length bytes of key at offset.
	// A missing key is ErrNotFound (from OpenRange, or at the latest from
	// the first Read). The reader returns io.EOF after exactly length
	// bytes; an object that ends sooner is an error wrapping
	// io.ErrUnexpectedEOF, never an early io.EOF. ctx bounds the reads
	// as well as the opening. Close releases what the stream holds (a
	// connection, a file), whether it was read to its end or not.
	OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// OpenRange streams length bytes of key at offset from s when s is a
// RangeOpener; else it reads them whole (ReadRangeInto, into a buffer of
// their size) and returns a reader of that buffer.
func OpenRange(ctx context.Context, s Store, key string, offset, length int64) (io.ReadCloser, error) {
	if ro, ok := s.(RangeOpener); ok {
		return ro.OpenRange(ctx, key, offset, length)
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("%s: invalid range %d+%d", key, offset, length)
	}
	buf := make([]byte, length)
	if err := ReadRangeInto(ctx, s, key, offset, buf); err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(buf)), nil
}

// ExactRange returns a reader of exactly length bytes of body, for
// RangeOpener implementations: io.EOF after length bytes (without reading
// further), and an error naming key and wrapping io.ErrUnexpectedEOF
// when body ends sooner. Its Close closes body.
func ExactRange(body io.ReadCloser, key string, length int64) io.ReadCloser {
	return &exactRange{body: body, key: key, left: length, length: length}
}

type exactRange struct {
	body         io.ReadCloser
	key          string
	left, length int64
}

func (e *exactRange) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.body.Read(p)
	e.left -= int64(n)
	// io.EOF is compared, not matched with errors.Is: a Reader returns it
	// as it is at the end of its data, while an error that merely wraps
	// it (a stream that failed to resume after a read met the end of a
	// dropped connection) is a failure whose cause must reach the user.
	switch {
	case e.left == 0 && (err == nil || err == io.EOF): //nolint:errorlint // see above
		return n, nil // the next Read says io.EOF
	case err == io.EOF: //nolint:errorlint // see above
		return n, fmt.Errorf("%s: range of %d bytes ended %d bytes early: %w",
			e.key, e.length, e.left, io.ErrUnexpectedEOF)
	}
	return n, err
}

func (e *exactRange) Close() error { return e.body.Close() }
