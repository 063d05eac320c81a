package s3

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Retries of a conditional write that collided with another one (409
// ConditionalRequestConflict): bounded, with doubling waits.
const (
	conflictAttempts = 6
	conflictBackoff  = 50 * time.Millisecond
)

// Put writes the object. With opts.IfAbsent it sends If-None-Match: * (412
// → ErrExists); with opts.IfVersion it sends If-Match: <ETag> (412, or 404
// on a missing key → ErrVersionMismatch). The returned Version is the ETag
// of the new object and ModTime the response's Date header (store's clock).
func (s *Store) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	if err := store.CheckKey(key); err != nil {
		return store.ObjectInfo{}, err
	}
	if err := s.awaitProbe(ctx); err != nil {
		return store.ObjectInfo{}, err
	}
	if err := store.CheckPutOptions(s.caps, opts); err != nil {
		return store.ObjectInfo{}, fmt.Errorf("s3: put %s on %s: %w", key, s.Describe(), err)
	}
	return s.put(ctx, key, data, opts)
}

// put is Put without the capability check (the probe uses it).
func (s *Store) put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	var info store.ObjectInfo
	var err error
	wait := conflictBackoff
	for attempt := 1; ; attempt++ {
		if int64(len(data)) > s.multipartThreshold {
			info, err = s.putMultipart(ctx, key, data, opts)
		} else {
			info, err = s.putSingle(ctx, key, data, opts)
		}
		if err == nil || !isConditionalConflict(err) || attempt == conflictAttempts {
			break
		}
		if err := clock.Sleep(ctx, s.clock, wait); err != nil {
			return store.ObjectInfo{}, err
		}
		wait *= 2
	}
	if err != nil {
		return store.ObjectInfo{}, s.mapPutErr(key, opts, err)
	}
	return info, nil
}

// mapPutErr maps a failed (conditional) write to store errors.
func (s *Store) mapPutErr(key string, opts store.PutOptions, err error) error {
	switch {
	case opts.IfAbsent && isPreconditionFailed(err):
		return fmt.Errorf("s3: create %s: %w", key, store.ErrExists)
	case opts.IfVersion != "" && (isPreconditionFailed(err) || isNotFound(err)):
		return fmt.Errorf("s3: swap %s (expected version %s): %w", key, opts.IfVersion, store.ErrVersionMismatch)
	}
	return fmt.Errorf("s3: put %s on %s: %w", key, s.Describe(), err)
}

// putSingle writes the object in one PutObject request.
func (s *Store) putSingle(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.full(key)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if opts.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	if opts.IfVersion != "" {
		in.IfMatch = aws.String(opts.IfVersion)
	}
	var out *s3.PutObjectOutput
	err := s.withSlot(ctx, func() error {
		var err error
		out, err = s.client.PutObject(ctx, in)
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, err
	}
	return store.ObjectInfo{
		Key:     key,
		Size:    int64(len(data)),
		ModTime: responseDate(out.ResultMetadata),
		Version: aws.ToString(out.ETag),
	}, nil
}

// responseDate returns the HTTP Date header of the response behind md, the
// store's clock at the time of the write, or the zero time.
func responseDate(md middleware.Metadata) time.Time {
	resp, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok {
		return time.Time{}
	}
	t, _ := headerDate(resp) // no or malformed Date header: the store cannot tell
	return t
}
