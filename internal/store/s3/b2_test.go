package s3

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudstic/cloudstic/internal/store"
)

// versionedBucket creates a bucket with versioning enabled (as B2 buckets
// always are) and removes it, with all versions, at the end of the test.
func versionedBucket(t *testing.T, e testEnv) string {
	t.Helper()
	ctx := context.Background()
	admin := openTest(t, e.config(t, FlavorB2))
	name := "b2v-" + randHex(t, 6)
	if _, err := admin.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	t.Cleanup(func() {
		out, err := admin.client.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(name)})
		if err != nil {
			t.Errorf("cleanup: ListObjectVersions: %v", err)
			return
		}
		for _, v := range out.Versions {
			_, err = admin.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: v.Key, VersionId: v.VersionId})
			if err != nil {
				t.Errorf("cleanup: delete %s: %v", aws.ToString(v.Key), err)
			}
		}
		for _, m := range out.DeleteMarkers {
			_, err = admin.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: m.Key, VersionId: m.VersionId})
			if err != nil {
				t.Errorf("cleanup: delete marker %s: %v", aws.ToString(m.Key), err)
			}
		}
		// The bucket itself may keep empty directories on versitygw; its
		// data dir is temporary, so a failed DeleteBucket is only logged.
		if _, err := admin.client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
			t.Logf("cleanup: DeleteBucket %s: %v", name, err)
		}
	})
	_, err := admin.client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(name),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
	})
	if err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}
	return name
}

func TestB2DeleteRemovesAllLockVersions(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		if !e.Versioning {
			t.Fatalf(`the %s test server cannot version a bucket (its VERSIONING variable is not true): restart it with: %s --stop; eval "$(%s)"`, e.Name, e.Script, e.Script)
		}
		cfg := e.config(t, FlavorB2)
		cfg.Bucket = versionedBucket(t, e)
		s := openTest(t, cfg)
		ctx := context.Background()
		put := func(key, data string) {
			t.Helper()
			if _, err := s.Put(ctx, key, []byte(data), store.PutOptions{}); err != nil {
				t.Fatalf("Put %s: %v", key, err)
			}
		}
		versions := func(key string) int {
			t.Helper()
			v, err := s.listVersions(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			return len(v)
		}

		cases := []struct {
			name       string
			key        string
			setup      func(key string)
			wantBefore int   // versions after setup
			wantErr    error // from Delete
			wantAfter  int   // versions left
		}{
			{"LockOverwritten", "index/lock.exclusive", func(k string) { put(k, "one"); put(k, "two"); put(k, "three") }, 3, nil, 0},
			{"SharedLock", "index/lock.shared/a1", func(k string) { put(k, "one") }, 1, nil, 0},
			// A lock hidden by someone else's plain delete: Delete reports it
			// absent but still purges the hidden versions.
			{"HiddenLock", "index/lock.shared/b2", func(k string) {
				put(k, "one")
				if err := s.deleteObject(ctx, k, ""); err != nil {
					t.Fatal(err)
				}
			}, 2, store.ErrNotFound, 0},
			{"MissingLock", "index/lock.shared/none", func(string) {}, 0, store.ErrNotFound, 0},
			// Other keys get a plain delete, which on a versioned bucket keeps
			// the old versions: this shows versioning is really on.
			{"DataKeepsVersions", "data/ab/x", func(k string) { put(k, "one"); put(k, "two") }, 2, nil, 3},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.setup(c.key)
				if n := versions(c.key); n != c.wantBefore {
					t.Fatalf("%d versions before Delete, want %d", n, c.wantBefore)
				}
				err := s.Delete(ctx, c.key)
				if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Fatalf("Delete = %v, want %v", err, c.wantErr)
				}
				if n := versions(c.key); n != c.wantAfter {
					t.Fatalf("%d versions left, want %d", n, c.wantAfter)
				}
				if _, err := s.Get(ctx, c.key, 1<<30); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
				}
				if err := s.Delete(ctx, c.key); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("second Delete = %v, want ErrNotFound", err)
				}
			})
		}
	})
}
