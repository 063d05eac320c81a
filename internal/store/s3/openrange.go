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
//
// A body whose connection breaks (reset, closed before its end) is asked
// for again from the byte the stream had reached, with the slot it holds:
// once per failure before the next byte arrives, the request itself
// retried by the SDK as every request is. The new request carries
// If-Match with the first answer's ETag: an object rewritten in between is
// store.ErrChanged, one deleted store.ErrNotFound.
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
	b := &slotBody{s: s, ctx: ctx, key: key, release: release, off: offset, end: offset + length}
	if err := b.get(); err != nil {
		release()
		return nil, err
	}
	return store.ExactRange(b, key, length), nil
}

// slotBody is the body of a range request, from b.off to b.end, that
// holds its request's slot until it is closed (the first Close gives the
// slot back; later ones do nothing). Read and Close are not called at
// once (io.ReadCloser).
type slotBody struct {
	s       *Store
	ctx     context.Context
	key     string
	release func()

	body     io.ReadCloser
	etag     string // the first answer's
	off, end int64  // the next byte to read, the end of the range
	// failed is a broken connection's error that came with bytes: the
	// next Read resumes.
	failed error

	once sync.Once
	err  error
}

// get sends the request for the bytes [b.off, b.end), if-match the first
// answer's ETag after the first, and takes the answer's body.
func (b *slotBody) get() error {
	in := &s3.GetObjectInput{
		Bucket: aws.String(b.s.bucket),
		Key:    aws.String(b.s.full(b.key)),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", b.off, b.end-1)),
	}
	if b.etag != "" {
		in.IfMatch = aws.String(b.etag)
	}
	out, err := b.s.client.GetObject(b.ctx, in)
	switch {
	case err != nil && b.etag != "" && isPreconditionFailed(err):
		return fmt.Errorf("s3: open range %s again at offset %d: %w", b.key, b.off, store.ErrChanged)
	case err != nil:
		return b.s.mapReadErr("open range", b.key, b.s.timeoutErr(b.ctx, err))
	}
	if err := b.check(out); err != nil {
		out.Body.Close() //nolint:errcheck // refused unread; closing drops the connection
		return err
	}
	if b.etag == "" {
		b.etag = aws.ToString(out.ETag)
	}
	b.body = out.Body
	return nil
}

// check refuses an answer of another length than asked, or (a server that
// ignored If-Match) of another ETag than the first answer's.
func (b *slotBody) check(out *s3.GetObjectOutput) error {
	length := b.end - b.off
	if n := out.ContentLength; n != nil && *n != length {
		if *n < length {
			return fmt.Errorf("s3: open range %s: answer of %d bytes at offset %d, want %d (object shorter than expected?): %w",
				b.key, *n, b.off, length, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("s3: open range %s: answer of %d bytes at offset %d, want %d (the server ignored the Range header?)",
			b.key, *n, b.off, length)
	}
	if etag := aws.ToString(out.ETag); b.etag != "" && etag != "" && etag != b.etag {
		return fmt.Errorf("s3: open range %s again at offset %d: ETag %s, was %s: %w", b.key, b.off, etag, b.etag, store.ErrChanged)
	}
	return nil
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
