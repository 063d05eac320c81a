//go:build unix

package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// metadataCounter listens on 127.0.0.1 in place of the EC2 instance
// metadata service, counts the connections made to it and closes each at
// once, as a host that is not on EC2 would.
func metadataCounter(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close() //nolint:errcheck // hanging up is the test server's answer
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() }) //nolint:errcheck // test server teardown
	return "http://" + ln.Addr().String(), &n
}

// TestS3NoCredentials: a user with no AWS credentials anywhere gets one
// line naming the sources tried and how to give credentials, no SDK log
// line, and the metadata probe makes at most two attempts per request.
// With -debug, the SDK's lines appear, as debug lines.
func TestS3NoCredentials(t *testing.T) {
	t.Parallel()
	e := needEnv(t, "scripts/s3-server.sh", "S3_TEST_ENDPOINT", "S3_TEST_BUCKET")
	home := t.TempDir()
	for _, tc := range []struct {
		name  string
		debug bool
	}{{"plain", false}, {"debug", true}} {
		t.Run(tc.name, func(t *testing.T) {
			imds, attempts := metadataCounter(t)
			env := []string{"HOME=" + home,
				"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"),
				"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
				"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds, "CLOUDSTIC_PASSWORD=x"}
			args := []string{"list", "-store", "s3:" + e["S3_TEST_BUCKET"] + "/" + randName(t, "nocreds-"),
				"-s3-endpoint", e["S3_TEST_ENDPOINT"]}
			if tc.debug {
				args = append(args, "-debug")
			}
			res := runWith(t, runOpts{env: env}, args...)
			wantCode(t, res, 1)
			lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			for _, want := range []string{"no AWS credentials found", "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
				"EC2 instance metadata", "-s3-profile", "-s3-access-key", "s3_secret_key_secret"} {
				if !strings.Contains(last, want) {
					t.Errorf("error %q does not mention %q", last, want)
				}
			}
			for _, l := range lines[:len(lines)-1] {
				if !tc.debug || !strings.HasPrefix(l, "debug: ") {
					t.Errorf("stray stderr line before the error: %q", l)
				}
			}
			if strings.Contains(res.stderr, "SDK ") {
				t.Errorf("the AWS SDK's own log reached stderr:\n%s", res.stderr)
			}
			if n := attempts.Load(); n < 1 || n > 4 {
				t.Errorf("%d connections to the metadata address, want 1..4 (two requests, two attempts each)", n)
			}
		})
	}
}
