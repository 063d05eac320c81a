package awsconf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// noCredentialEnv clears every variable the SDK's default chain reads and
// points the instance-metadata client at endpoint.
func noCredentialEnv(t *testing.T, endpoint string) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint)
}

// countingListener accepts connections on 127.0.0.1, counts them and
// either closes each at once or holds it open without answering (a host
// that drops the metadata traffic).
func countingListener(t *testing.T, hold bool) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() }) //nolint:errcheck // test server teardown
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			if !hold {
				c.Close() //nolint:errcheck // hanging up is the test server's answer
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close() //nolint:errcheck // test server teardown
				<-done
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &n
}

// TestNoCredentialsIsBounded: with nothing configured, Load fails with
// ErrNoCredentials naming the sources it tried, after at most
// IMDSMaxAttempts attempts for each of the two metadata requests (the
// SDK's default retryer makes three each).
func TestNoCredentialsIsBounded(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			endpoint, attempts := countingListener(t, hold)
			noCredentialEnv(t, endpoint)
			start := time.Now()
			_, err := Load(context.Background(), Options{Region: "us-east-1"})
			elapsed := time.Since(start)
			if !errors.Is(err, ErrNoCredentials) {
				t.Fatalf("Load: %v, want ErrNoCredentials", err)
			}
			for _, want := range []string{"AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", "credentials files", "EC2 instance metadata"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if got := attempts.Load(); got < 1 || got > 2*IMDSMaxAttempts {
				t.Errorf("%d connections to the metadata address, want 1..%d", got, 2*IMDSMaxAttempts)
			}
			// A generous bound: the point is the attempt count above;
			// this only catches an unbounded wait.
			if elapsed > 15*time.Second {
				t.Errorf("Load took %v", elapsed)
			}
		})
	}
}

// TestClosedMetadataPort: nothing listens at the metadata address.
func TestClosedMetadataPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() //nolint:errcheck // only its free port was wanted
	noCredentialEnv(t, "http://"+addr)
	if _, err := Load(context.Background(), Options{Region: "us-east-1"}); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("Load: %v, want ErrNoCredentials", err)
	}
}

// TestSDKLogRouted: a metadata address answering 403 makes the SDK log
// "falling back to IMDSv1". That line must reach Logf when set, and never
// stderr.
func TestSDKLogRouted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	noCredentialEnv(t, srv.URL)
	stderr := captureStderr(t)
	var mu sync.Mutex
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	if _, err := Load(context.Background(), Options{Region: "us-east-1", Logf: logf}); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("Load with Logf: %v, want ErrNoCredentials", err)
	}
	if _, err := Load(context.Background(), Options{Region: "us-east-1"}); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("Load without Logf: %v, want ErrNoCredentials", err)
	}
	if out := stderr(); out != "" {
		t.Errorf("the SDK wrote to stderr: %q", out)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "falling back to IMDSv1") {
		t.Errorf("the SDK's warning did not reach Logf; logged: %q", logged)
	}
}

// TestStaticKeysSkipChain: given keys are used as they are, with no probe.
func TestStaticKeysSkipChain(t *testing.T) {
	endpoint, attempts := countingListener(t, false)
	noCredentialEnv(t, endpoint)
	cfg, err := Load(context.Background(), Options{Region: "us-east-1", AccessKey: "AK", SecretKey: "SK"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || c.AccessKeyID != "AK" {
		t.Fatalf("credentials %+v, %v", c, err)
	}
	if n := attempts.Load(); n != 0 {
		t.Errorf("%d connections to the metadata address with static keys", n)
	}
}

// TestProfileNotFound: a named profile that does not exist is one error.
func TestProfileNotFound(t *testing.T) {
	noCredentialEnv(t, "http://127.0.0.1:1")
	_, err := Load(context.Background(), Options{Region: "us-east-1", Profile: "nope"})
	if !errors.Is(err, ErrProfileNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Load: %v, want ErrProfileNotFound naming the profile", err)
	}
}

// captureStderr redirects os.Stderr to a pipe until the returned function
// is called, which restores it and returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r) // a read error only shortens what the test sees
		out <- string(b)
	}()
	restored := false
	restore := func() string {
		if restored {
			return ""
		}
		restored = true
		os.Stderr = old
		w.Close() //nolint:errcheck // ends the capture; the reader returns what was written
		return <-out
	}
	t.Cleanup(func() { restore() })
	return restore
}
