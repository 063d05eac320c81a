package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// testEnv is one S3 test server (versitygw, a SeaweedFS cluster): see
// package s3test.
type testEnv struct{ s3test.Server }

// eachServer runs fn once per S3 test server, as parallel subtests named by
// the server; a server that is not running fails the test.
func eachServer(t *testing.T, fn func(t *testing.T, e testEnv)) {
	s3test.Each(t, func(t *testing.T, srv s3test.Server) { fn(t, testEnv{srv}) })
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
		Bucket:    e.Bucket,
		Prefix:    "test-" + randHex(t, 8),
		Endpoint:  e.Endpoint,
		Region:    e.Region,
		AccessKey: e.AccessKey,
		SecretKey: e.SecretKey,
		Flavor:    flavor,
	}
}

// openTest opens a store on cfg, waits for its capability probe (tests
// then change its fields and count its requests without racing it) and,
// at the end of the test, deletes everything under its prefix and closes
// it.
func openTest(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open(%s/%s): %v", cfg.Bucket, cfg.Prefix, err)
	}
	// The probe has run and deleted its key: tests may change the store's
	// fields, and find only their own objects under the prefix.
	<-s.probeDone
	t.Cleanup(func() {
		cleanPrefix(t, cfg)
		s.Close() //nolint:errcheck // only drops idle connections; it never fails
	})
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
