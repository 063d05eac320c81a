package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudstic/cloudstic/internal/store"
)

// mapReadErr turns a failed read of key into store errors.
func (s *Store) mapReadErr(op, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("s3: %s %s: %w", op, key, store.ErrNotFound)
	}
	return fmt.Errorf("s3: %s %s on %s: %w", op, key, s.Describe(), err)
}

// Get returns the whole object if it is at most max bytes long: an object
// whose Content-Length is over max is refused before its body is read, and
// no more than max+1 bytes of a body are read in any case.
func (s *Store) Get(ctx context.Context, key string, max int64) ([]byte, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	var data []byte
	err := s.withSlot(ctx, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.full(key))})
		if err != nil {
			return err
		}
		// Closing a body not read to its end drops the connection
		// instead of reusing it: cheaper than reading what we refuse.
		defer out.Body.Close() //nolint:errcheck // a response body we only read; ReadLimited reports read errors
		size := int64(-1)
		if out.ContentLength != nil {
			size = *out.ContentLength
		}
		data, err = store.ReadLimited(out.Body, key, size, max)
		return err
	})
	if errors.Is(err, store.ErrTooLarge) {
		return nil, fmt.Errorf("s3: get on %s: %w", s.Describe(), err)
	}
	if err != nil {
		return nil, s.mapReadErr("get", key, err)
	}
	return data, nil
}

// GetRange returns length bytes at offset; a range past the end of the
// object is an error (not ErrNotFound).
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	return store.GetRangeByReading(ctx, s, key, offset, length)
}

// ReadRange fills buf with the len(buf) bytes of key at offset; a range
// past the end of the object is an error (not ErrNotFound).
func (s *Store) ReadRange(ctx context.Context, key string, offset int64, buf []byte) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	length := int64(len(buf))
	if offset < 0 {
		return fmt.Errorf("s3: get range %s: negative offset %d or length %d", key, offset, length)
	}
	if length == 0 {
		info, err := s.Stat(ctx, key)
		if err != nil {
			return err
		}
		if offset > info.Size {
			return fmt.Errorf("s3: get range %s: offset %d past the end (%d bytes)", key, offset, info.Size)
		}
		return nil
	}
	var got int64
	err := s.withSlot(ctx, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
			Bucket: aws.String(s.bucket),
			Key:    aws.String(s.full(key)),
			Range:  aws.String(fmt.Sprintf("bytes=%d-%d", offset, offset+length-1)),
		})
		if err != nil {
			return err
		}
		defer out.Body.Close() //nolint:errcheck // a response body we only read; the reads report errors
		got, err = readBody(out.Body, buf)
		return err
	})
	if err != nil {
		return s.mapReadErr("get range", key, err)
	}
	if got != length {
		return fmt.Errorf("s3: get range %s: got %d bytes at offset %d, want %d (object shorter than expected?)",
			key, got, offset, length)
	}
	return nil
}

// readBody fills buf from body and returns how many bytes the body had, up
// to len(buf)+1: one byte more than asked catches a server that ignored
// the Range header.
func readBody(body io.Reader, buf []byte) (int64, error) {
	n, err := io.ReadFull(body, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return int64(n), nil
	}
	if err != nil {
		return int64(n), err
	}
	var extra [1]byte
	m, err := io.ReadFull(body, extra[:])
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return int64(n + m), err
}

// Stat returns the object's size, LastModified and ETag.
func (s *Store) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	if err := store.CheckKey(key); err != nil {
		return store.ObjectInfo{}, err
	}
	var out *s3.HeadObjectOutput
	err := s.withSlot(ctx, func() error {
		var err error
		out, err = s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.full(key))})
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, s.mapReadErr("stat", key, err)
	}
	return store.ObjectInfo{
		Key:     key,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		Version: aws.ToString(out.ETag),
	}, nil
}

// List calls fn for every object under prefix, keys relative to the store.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.ObjectInfo) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.full(prefix)),
	})
	for p.HasMorePages() {
		var page *s3.ListObjectsV2Output
		err := s.withSlot(ctx, func() error {
			var err error
			page, err = p.NextPage(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("s3: list %q on %s: %w", prefix, s.Describe(), err)
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			if !strings.HasPrefix(key, s.prefix) {
				continue // cannot happen: the server filtered by prefix
			}
			err := fn(store.ObjectInfo{
				Key:     key[len(s.prefix):],
				Size:    aws.ToInt64(obj.Size),
				ModTime: aws.ToTime(obj.LastModified),
				Version: aws.ToString(obj.ETag),
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes the object; a missing key gives ErrNotFound.
//
// S3's DeleteObject succeeds on a missing key, so Delete asks HeadObject
// first. There is a tiny race: if another client deletes the key between
// the HEAD and the DELETE, both report success. Callers only use the
// not-found answer to learn the key is absent, which remains true.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.remove(ctx, key, true)
}

// DeleteIfPresent deletes the object with one request (no HeadObject
// first): a missing key is no error (store.IfPresentDeleter).
func (s *Store) DeleteIfPresent(ctx context.Context, key string) error {
	err := s.remove(ctx, key, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// remove is Delete, asking HeadObject first only with reportMissing. A B2
// lock key loses every version either way (deleteAllVersions).
func (s *Store) remove(ctx context.Context, key string, reportMissing bool) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if err := s.awaitProbe(ctx); err != nil {
		return err
	}
	if s.flavor == FlavorB2 && isLockKey(key) {
		return s.deleteAllVersions(ctx, key)
	}
	if reportMissing {
		if _, err := s.Stat(ctx, key); err != nil {
			return err
		}
	}
	return s.deleteObject(ctx, key, "")
}

// deleteObject deletes one object (one version when versionID is set).
func (s *Store) deleteObject(ctx context.Context, key, versionID string) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.full(key))}
	if versionID != "" {
		in.VersionId = aws.String(versionID)
	}
	err := s.withSlot(ctx, func() error {
		_, err := s.client.DeleteObject(ctx, in)
		return err
	})
	if err != nil && isNotFound(err) {
		return fmt.Errorf("s3: delete %s: %w", key, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("s3: delete %s on %s: %w", key, s.Describe(), err)
	}
	return nil
}

// Now returns a lower bound of the server's clock: from the Date header of
// an answer that arrived in the last dateFresh (opening the store asked
// for the bucket, and a repository's config is read next), else from a
// one-key listing of the repository's prefix made for it. A Date is the
// server's clock, truncated to the second, at a moment before the answer
// arrived.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if t, ok := s.date.now(s.clock.Mono()); ok {
		return t, nil
	}
	var out *s3.ListObjectsV2Output
	err := s.withSlot(ctx, func() error {
		var err error
		out, err = s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String(s.bucket), Prefix: aws.String(s.full("")), MaxKeys: aws.Int32(1)})
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("s3: reading the server's time on %s: %w", s.Describe(), err)
	}
	t := responseDate(out.ResultMetadata)
	if t.IsZero() {
		return time.Time{}, fmt.Errorf("s3: %s sent no Date header: %w", s.Describe(), store.ErrUnsupported)
	}
	return t, nil
}
