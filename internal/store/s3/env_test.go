package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
)

// testEnv is the S3 test server described by the variables that
// scripts/s3-server.sh prints.
type testEnv struct {
	endpoint, bucket, region, accessKey, secretKey string
	versioning                                     bool
}

// serverEnv returns the test server's settings, failing the test (or
// skipping it when CLOUDSTIC_TEST_NO_SERVERS=1) when none is configured.
func serverEnv(t *testing.T) testEnv {
	t.Helper()
	e := testEnv{
		endpoint:   os.Getenv("S3_TEST_ENDPOINT"),
		bucket:     os.Getenv("S3_TEST_BUCKET"),
		region:     os.Getenv("S3_TEST_REGION"),
		accessKey:  os.Getenv("S3_TEST_ACCESS_KEY_ID"),
		secretKey:  os.Getenv("S3_TEST_SECRET_ACCESS_KEY"),
		versioning: os.Getenv("S3_TEST_VERSIONING") == "true",
	}
	if e.endpoint == "" || e.bucket == "" {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("no S3 test server (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal(`S3 test server not configured (S3_TEST_ENDPOINT/S3_TEST_BUCKET unset): start it with: eval "$(scripts/s3-server.sh)"`)
	}
	return e
}

// randHex returns n random bytes as hex.
func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// config returns a Config for the test server with a fresh random prefix.
func (e testEnv) config(t *testing.T, flavor Flavor) Config {
	return Config{
		Bucket:    e.bucket,
		Prefix:    "test-" + randHex(t, 8),
		Endpoint:  e.endpoint,
		Region:    e.region,
		AccessKey: e.accessKey,
		SecretKey: e.secretKey,
		Flavor:    flavor,
	}
}

// openTest opens a store on cfg and, at the end of the test, deletes
// everything under its prefix and closes it.
func openTest(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open(%s/%s): %v", cfg.Bucket, cfg.Prefix, err)
	}
	t.Cleanup(func() { cleanPrefix(t, cfg) })
	return s
}

// cleanPrefix deletes every object under cfg's prefix.
func cleanPrefix(t *testing.T, cfg Config) {
	ctx := context.Background()
	cfg.Flavor = FlavorB2 // no probe needed for cleaning
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Errorf("cleanup: Open: %v", err)
		return
	}
	defer s.Close() //nolint:errcheck // only drops idle connections; it never fails
	var keys []string
	err = s.List(ctx, "", func(oi store.ObjectInfo) error { keys = append(keys, oi.Key); return nil })
	if err != nil {
		t.Errorf("cleanup: List: %v", err)
	}
	for _, k := range keys {
		if err := s.deleteObject(ctx, k, ""); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cleanup: delete %s: %v", k, err)
		}
	}
}
