package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudstic/cloudstic/internal/store"
)

// OpenRange streams the length bytes of key at offset: one GetObject with
// a Range header, whose body the caller reads as it arrives. The request
// holds one of the MaxConnections slots from its sending until the
// returned reader is closed. A missing key is store.ErrNotFound; a range
// past the end of the object, or an answer of another length than asked
// (a server that ignored the Range header), is an error at once. Like
// ReadRange, a zero length asks only whether the object exists and
// reaches offset (Stat) and returns an empty reader.
func (s *Store) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("s3: open range %s: negative offset %d or length %d", key, offset, length)
	}
	if length == 0 {
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if offset > info.Size {
			return nil, fmt.Errorf("s3: open range %s: offset %d past the end (%d bytes)", key, offset, info.Size)
		}
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	release, err := s.acquireSlot(ctx)
	if err != nil {
		return nil, s.mapReadErr("open range", key, err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(s.full(key)),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", offset, offset+length-1)),
	})
	if err != nil {
		release()
		return nil, s.mapReadErr("open range", key, s.timeoutErr(ctx, err))
	}
	if n := out.ContentLength; n != nil && *n != length {
		out.Body.Close() //nolint:errcheck // refused unread; closing drops the connection
		release()
		if *n < length {
			return nil, fmt.Errorf("s3: open range %s: answer of %d bytes at offset %d, want %d (object shorter than expected?): %w",
				key, *n, offset, length, io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("s3: open range %s: answer of %d bytes at offset %d, want %d (the server ignored the Range header?)",
			key, *n, offset, length)
	}
	return store.ExactRange(&slotBody{s: s, ctx: ctx, key: key, body: out.Body, release: release}, key, length), nil
}

// slotBody is a response body that holds its request's slot until it is
// closed (the first Close gives the slot back; later ones do nothing).
type slotBody struct {
	s       *Store
	ctx     context.Context
	key     string
	body    io.ReadCloser
	release func()
	once    sync.Once
	err     error
}

func (b *slotBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		err = fmt.Errorf("s3: read range %s on %s: %w", b.key, b.s.Describe(), b.s.timeoutErr(b.ctx, err))
	}
	return n, err
}

// Close closes the body (a body not read to its end drops the connection
// instead of reusing it) and gives the slot back.
func (b *slotBody) Close() error {
	b.once.Do(func() {
		b.err = b.body.Close()
		b.release()
	})
	return b.err
}
