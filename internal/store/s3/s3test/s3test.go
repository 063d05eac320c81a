package s3test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Server is one S3 test server, as its start script exports it.
type Server struct {
	// Name is the subtest name: "versitygw" or "seaweedfs".
	Name string
	// Script starts the server and prints its variables.
	Script string
	// Endpoint is the server's URL (path-style addressing).
	Endpoint string
	// Bucket exists on the server; tests work under a prefix of their own.
	Bucket string
	// Region is the SigV4 region (us-east-1 when the script names none).
	Region string
	// AccessKey and SecretKey are the server's credentials.
	AccessKey, SecretKey string
	// Versioning says a test may turn versioning on for a bucket it
	// creates (PutBucketVersioning).
	Versioning bool
	// DataDir is where versitygw keeps objects as files (DataDir/Bucket/Key);
	// empty for servers that keep them otherwise.
	DataDir string
}

// known is the table of servers: each exports its variables under a prefix.
func known() []struct{ name, prefix, script string } {
	return []struct{ name, prefix, script string }{
		{"versitygw", "S3_TEST_", "scripts/s3-server.sh"},
		{"seaweedfs", "SEAWEED_TEST_", "scripts/seaweedfs-server.sh"},
	}
}

// Servers returns every S3 test server. A server whose variables are unset
// fails the test, naming the script that starts it (with
// CLOUDSTIC_TEST_NO_SERVERS=1 the test is skipped instead).
func Servers(t testing.TB) []Server {
	t.Helper()
	var out []Server
	var missing []string
	for _, k := range known() {
		s := Server{
			Name:       k.name,
			Script:     k.script,
			Endpoint:   os.Getenv(k.prefix + "ENDPOINT"),
			Bucket:     os.Getenv(k.prefix + "BUCKET"),
			Region:     os.Getenv(k.prefix + "REGION"),
			AccessKey:  os.Getenv(k.prefix + "ACCESS_KEY_ID"),
			SecretKey:  os.Getenv(k.prefix + "SECRET_ACCESS_KEY"),
			Versioning: os.Getenv(k.prefix+"VERSIONING") == "true",
			DataDir:    os.Getenv(k.prefix + "DATA_DIR"),
		}
		if s.Endpoint == "" || s.Bucket == "" || s.AccessKey == "" || s.SecretKey == "" {
			missing = append(missing, `eval "$(`+k.script+`)"`)
			continue
		}
		if s.Region == "" {
			s.Region = "us-east-1"
		}
		out = append(out, s)
	}
	if len(missing) > 0 {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skipf("S3 test servers not configured (CLOUDSTIC_TEST_NO_SERVERS=1): %s", strings.Join(missing, "; "))
		}
		t.Fatalf("S3 test servers not configured: start them with: %s", strings.Join(missing, "; "))
	}
	return out
}

// Named returns the server called name (for a test that needs what only
// that server offers, such as versitygw's files).
func Named(t testing.TB, name string) Server {
	t.Helper()
	for _, s := range Servers(t) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no S3 test server named %q", name)
	return Server{}
}

// Each runs fn once per server, as parallel subtests named by the server.
func Each(t *testing.T, fn func(t *testing.T, srv Server)) {
	t.Helper()
	for _, srv := range Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, srv)
		})
	}
}

// Client returns an SDK client for the server (path-style, static keys).
func (s Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// RemoveAtCleanup deletes every object under prefix + "/" in the server's
// bucket when the test ends (on versitygw, the prefix's directory).
func (s Server) RemoveAtCleanup(t testing.TB, prefix string) {
	t.Cleanup(func() {
		if s.DataDir != "" {
			if err := os.RemoveAll(filepath.Join(s.DataDir, s.Bucket, prefix)); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			return
		}
		ctx := context.Background()
		c := s.Client()
		var keys []*string
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix + "/")})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Errorf("cleanup: listing %s: %v", prefix, err)
				return
			}
			for _, o := range page.Contents {
				keys = append(keys, o.Key)
			}
		}
		for _, k := range keys {
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.Bucket), Key: k}); err != nil {
				t.Errorf("cleanup: deleting %s: %v", aws.ToString(k), err)
			}
		}
	})
}
