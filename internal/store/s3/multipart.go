package s3

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"

	"github.com/cloudstic/cloudstic/internal/store"
)

// abortTimeout bounds the cleanup of a failed multipart upload, which runs
// even when the caller's context is already cancelled.
const abortTimeout = 30 * time.Second

// putMultipart uploads data in parts of s.partSize, in parallel.
// The condition of opts goes on CompleteMultipartUpload, which is where the
// object appears atomically.
func (s *Store) putMultipart(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	var created *s3.CreateMultipartUploadOutput
	err := s.withSlot(ctx, func() error {
		var err error
		created, err = s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String(s.bucket), Key: aws.String(s.full(key)),
		})
		return err
	})
	if err != nil {
		return store.ObjectInfo{}, err
	}
	uploadID := created.UploadId
	parts, err := s.uploadParts(ctx, key, uploadID, data)
	var out *s3.CompleteMultipartUploadOutput
	if err == nil {
		in := &s3.CompleteMultipartUploadInput{
			Bucket:          aws.String(s.bucket),
			Key:             aws.String(s.full(key)),
			UploadId:        uploadID,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
		}
		if opts.IfAbsent {
			in.IfNoneMatch = aws.String("*")
		}
		if opts.IfVersion != "" {
			in.IfMatch = aws.String(opts.IfVersion)
		}
		err = s.withSlot(ctx, func() error {
			var err error
			out, err = s.client.CompleteMultipartUpload(ctx, in)
			return err
		})
	}
	if err != nil {
		s.abortMultipart(ctx, key, uploadID)
		return store.ObjectInfo{}, err
	}
	return store.ObjectInfo{
		Key:     key,
		Size:    int64(len(data)),
		ModTime: responseDate(out.ResultMetadata),
		Version: aws.ToString(out.ETag),
	}, nil
}

// uploadParts uploads data as numbered parts, as many at once as the
// store has request slots, and returns them in order for Complete.
func (s *Store) uploadParts(ctx context.Context, key string, uploadID *string, data []byte) ([]types.CompletedPart, error) {
	n := (int64(len(data)) + s.partSize - 1) / s.partSize
	parts := make([]types.CompletedPart, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cap(s.sem))
	for i := range n {
		off := i * s.partSize
		chunk := data[off:min(off+s.partSize, int64(len(data)))]
		num := aws.Int32(int32(i + 1))
		g.Go(func() error {
			var out *s3.UploadPartOutput
			err := s.withSlot(gctx, func() error {
				var err error
				out, err = s.client.UploadPart(gctx, &s3.UploadPartInput{
					Bucket:        aws.String(s.bucket),
					Key:           aws.String(s.full(key)),
					UploadId:      uploadID,
					PartNumber:    num,
					Body:          bytes.NewReader(chunk),
					ContentLength: aws.Int64(int64(len(chunk))),
				})
				return err
			})
			if err != nil {
				return fmt.Errorf("part %d: %w", *num, err)
			}
			parts[i] = types.CompletedPart{ETag: out.ETag, PartNumber: num}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return parts, nil
}

// abortMultipart discards a failed upload's parts. It is best effort: the
// caller already has the error that matters, and a leftover upload only
// costs storage until the bucket's lifecycle rule (if any) removes it.
func (s *Store) abortMultipart(ctx context.Context, key string, uploadID *string) {
	// The caller may have given up (Ctrl-C): an outage is not waited out.
	ctx, cancel := context.WithTimeout(briefRetries(context.WithoutCancel(ctx)), abortTimeout)
	defer cancel()
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.full(key)), UploadId: uploadID,
	})
	if err != nil && s.logf != nil {
		s.logf("s3: abort multipart upload of %s: %v", key, err)
	}
}
