//go:build unix

package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// TestInterruptTwice: a backup to S3 whose server stops answering is
// interrupted (SIGINT); its cleanup then waits for the store (the lock
// release cannot be answered). A second SIGINT makes it quit at once with
// exit code 130, and the repository holds what the first interruption
// leaves: no snapshot, and at most the backup's own lock, whose release
// never reached the server.
func TestInterruptTwice(t *testing.T) {
	t.Parallel()
	r := newRepo(t, storeKind{"s3", s3Store})
	var endpoint string
	for i, a := range r {
		if a == "-s3-endpoint" {
			endpoint = r[i+1]
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p, err := fault.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() //nolint:errcheck // test teardown; never thawed, so the frozen requests never arrive
	through := append(repoArgs{}, r...)
	for i, a := range through {
		if a == "-s3-endpoint" {
			through[i+1] = u.Scheme + "://" + p.Addr()
		}
	}
	src := smallTree(t, 12)
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil { // keeps the backup busy
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	bp := startLogged(t, through.with("backup", "-store-response-timeout", "10m", "-source", "local:"+src))
	c, exited, stderr := bp.cmd, bp.exited, bp.stderr
	waitFor := func(what string, cond func() bool) {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			select {
			case <-exited:
				t.Fatalf("backup ended while waiting for %s; stderr:\n%s", what, stderr())
			case <-tick.C:
			}
		}
	}
	waitFor("its lock", func() bool {
		var locks []any
		decodeJSON(t, mustRun(t, r.with("locks", "-json")...), &locks)
		return len(locks) > 0
	})
	p.Freeze()
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitFor("the first interrupt", func() bool { return strings.Contains(stderr(), "interrupted: stopping") })
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited
	if code := c.ProcessState.ExitCode(); code != cli.ExitInterruptedTwice || !strings.Contains(stderr(), "interrupted again") {
		t.Fatalf("exit code %d, want %d after a second interrupt; stderr:\n%s", code, cli.ExitInterruptedTwice, stderr())
	}
	if snaps := listJSON(t, r); len(snaps) != 0 {
		t.Errorf("interrupted backup saved %d snapshots", len(snaps))
	}
	var locks []struct {
		Holder string `json:"holder"`
	}
	decodeJSON(t, mustRun(t, r.with("locks", "-json")...), &locks)
	if len(locks) > 1 {
		t.Errorf("%d locks left, want at most the backup's own: %v", len(locks), locks)
	}
}

// TestSilentStore: a command against S3 and SFTP endpoints that accept the
// connection and never answer fails with one line saying the store did not
// answer, after one attempt (no second connection), with the deadlines
// given by flag and by environment.
func TestSilentStore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args func(addr string) []string
		env  []string
	}{
		{"s3 flag", func(addr string) []string {
			return append(s3Store(t), "-s3-endpoint", "http://"+addr, "-store-response-timeout", "300ms")
		}, nil},
		{"s3 env", func(addr string) []string {
			return append(s3Store(t), "-s3-endpoint", "http://"+addr)
		}, []string{"CLOUDSTIC_STORE_RESPONSE_TIMEOUT=300ms"}},
		{"sftp", func(addr string) []string {
			e := needEnv(t, "scripts/sftp-server.sh", "SFTP_TEST_USER", "SFTP_TEST_KEY")
			return []string{"-store", "sftp://" + e["SFTP_TEST_USER"] + "@" + addr + "/repo", "-store-sftp-key", e["SFTP_TEST_KEY"],
				"-store-sftp-insecure", "-store-connect-timeout", "300ms"}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := fault.NewProxy("")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close() //nolint:errcheck // test teardown
			args := append([]string{"list"}, c.args(p.Addr())...)
			res := runWith(t, runOpts{env: append(c.env, "CLOUDSTIC_PASSWORD=x")}, args...)
			lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
			if res.code != cli.ExitError || len(lines) != 1 || !strings.Contains(lines[0], "did not answer in time") {
				t.Fatalf("want exit %d and one line saying the store did not answer; got %v", cli.ExitError, res)
			}
			if n := p.Accepted(); n != 1 {
				t.Errorf("%d connections, want 1 (no retry after the timeout)", n)
			}
		})
	}
}
