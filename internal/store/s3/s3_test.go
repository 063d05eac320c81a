package s3

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cases := []struct {
			name   string
			flavor Flavor
			want   store.Capabilities
		}{
			// versitygw honours both conditional headers: the probe must find them.
			{"S3", FlavorS3, store.Capabilities{CreateIfAbsent: true, CompareAndSwap: true}},
			// B2 flavor on the same server: no conditional writes, so the
			// suite's fallback expectations (ErrUnsupported) run.
			{"NoConditionalWrites", FlavorB2, store.Capabilities{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := openTest(t, e.config(t, c.flavor))
				if got := s.Capabilities(); got != c.want {
					t.Fatalf("Capabilities = %+v, want %+v", got, c.want)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				storetest.Run(t, func(t *testing.T) store.Store { return openTest(t, e.config(t, c.flavor)) })
			})
		}
	})
}

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestOpenErrors(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cases := []struct {
			name   string
			modify func(*Config)
			check  func(error) bool
			want   string
		}{
			{"MissingBucket", func(c *Config) { c.Bucket = "no-such-bucket-" + randHex(t, 4) },
				func(err error) bool { return errors.Is(err, ErrBucketNotFound) }, "ErrBucketNotFound"},
			{"WrongSecret", func(c *Config) { c.SecretKey += "-wrong" },
				func(err error) bool { return errors.Is(err, ErrAccessDenied) }, "ErrAccessDenied"},
			{"UnknownAccessKey", func(c *Config) { c.AccessKey = "nobody" + randHex(t, 4) },
				func(err error) bool { return errors.Is(err, ErrAccessDenied) }, "ErrAccessDenied"},
			// Connection refused is retried for briefRetryTimeout (Open's
			// check of the bucket), then reported with the cause.
			{"Unreachable", func(c *Config) { c.Endpoint = "http://" + closedPort(t) },
				func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }, "connection refused"},
			{"NoBucketName", func(c *Config) { c.Bucket = "" },
				func(err error) bool { return err != nil }, "an error"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				cfg := e.config(t, FlavorS3)
				c.modify(&cfg)
				s, err := Open(context.Background(), cfg)
				if err == nil {
					s.Close() //nolint:errcheck // only drops idle connections; it never fails
					t.Fatalf("Open succeeded, want %s", c.want)
				}
				if !c.check(err) {
					t.Fatalf("Open = %v, want %s", err, c.want)
				}
				t.Logf("Open: %v", err)
			})
		}
	})
}

func TestOpenCancelled(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Open(ctx, e.config(t, FlavorS3)); !errors.Is(err, context.Canceled) {
			t.Fatalf("Open with a cancelled context = %v, want context.Canceled", err)
		}
	})
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		flavor       Flavor
		prefix, want string
	}{
		{FlavorS3, "backups/host", "s3:bkt/backups/host"},
		{FlavorB2, "p", "b2:bkt/p"},
		{FlavorS3, "", "s3:bkt/"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			s := &Store{bucket: "bkt", flavor: c.flavor}
			if c.prefix != "" {
				s.prefix = c.prefix + "/"
			}
			if got := s.Describe(); got != c.want {
				t.Fatalf("Describe = %q, want %q", got, c.want)
			}
		})
	}
}
