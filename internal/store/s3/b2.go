package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudstic/cloudstic/internal/store"
)

// lockKeyPrefix marks the repository lock's keys. On B2 an overwrite keeps
// the old version and a delete only hides the newest one, so a deleted lock
// could come back; these keys are deleted with all their versions.
const lockKeyPrefix = "index/lock"

// isLockKey reports whether key belongs to the repository lock.
func isLockKey(key string) bool { return strings.HasPrefix(key, lockKeyPrefix) }

// objectVersion is one version (or delete marker) of a key.
type objectVersion struct {
	id     string
	latest bool // the newest version, and not a delete marker
}

// listVersions returns every version and delete marker of exactly key.
func (s *Store) listVersions(ctx context.Context, key string) ([]objectVersion, error) {
	full := s.full(key)
	p := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(full),
	})
	var versions []objectVersion
	for p.HasMorePages() {
		var page *s3.ListObjectVersionsOutput
		err := s.withSlot(ctx, func() error {
			var err error
			page, err = p.NextPage(ctx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("s3: list versions of %s on %s: %w", key, s.Describe(), err)
		}
		for _, v := range page.Versions {
			if aws.ToString(v.Key) == full {
				versions = append(versions, objectVersion{id: aws.ToString(v.VersionId), latest: aws.ToBool(v.IsLatest)})
			}
		}
		for _, m := range page.DeleteMarkers {
			if aws.ToString(m.Key) == full {
				versions = append(versions, objectVersion{id: aws.ToString(m.VersionId)})
			}
		}
	}
	return versions, nil
}

// deleteAllVersions deletes every version and delete marker of key, so a
// deleted lock never reappears. It returns ErrNotFound when no live version
// existed (after still purging hidden ones). Only the versions listed are
// deleted: a lock written after the listing survives, as it should.
func (s *Store) deleteAllVersions(ctx context.Context, key string) error {
	versions, err := s.listVersions(ctx, key)
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		// A server without versioning support may list nothing: fall back
		// to the plain delete.
		if _, err := s.Stat(ctx, key); err != nil {
			return err
		}
		return s.deleteObject(ctx, key, "")
	}
	live := false
	for _, v := range versions {
		live = live || v.latest
		if err := s.deleteObject(ctx, key, v.id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if !live {
		return fmt.Errorf("s3: delete %s: %w", key, store.ErrNotFound)
	}
	return nil
}
