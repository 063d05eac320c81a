package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// scriptDeadline bounds one run of the start script (the SeaweedFS binary
// is already built: the shared cluster's start built it).
const scriptDeadline = 3 * time.Minute

// cluster is a private SeaweedFS cluster started by the script.
type cluster struct {
	t      *testing.T
	script string
	env    []string          // the script's settings: port, state dir
	vars   map[string]string // what it exported on its last run
	srv    s3test.Server
}

// startCluster starts a cluster of the test's own, on free ports, with its
// state and data in temporary directories, and stops it when the test ends.
// The script is the one the shared cluster was started with
// (SEAWEED_TEST_SCRIPT), which also says that the binary is built.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	script := os.Getenv("SEAWEED_TEST_SCRIPT")
	if script == "" {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("no SeaweedFS test cluster (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal(`SEAWEED_TEST_SCRIPT unset: start the SeaweedFS test cluster with: eval "$(scripts/seaweedfs-server.sh)"`)
	}
	c := &cluster{t: t, script: script}
	c.env = []string{
		"SEAWEED_TEST_PORT=" + strconv.Itoa(freePortBase(t)),
		"SEAWEED_TEST_STATE=" + t.TempDir(),
		"SEAWEED_TEST_BUCKET=cluster-test",
	}
	data := t.TempDir()
	// Registered after the temporary directories, so it runs before
	// their removal.
	t.Cleanup(func() {
		if _, stderr, err := c.command("--stop"); err != nil {
			t.Errorf("stopping the cluster: %v\n%s", err, stderr)
		}
	})
	c.run(data)
	return c
}

// freePortBase returns a port P such that P..P+5 and their gRPC ports
// (10000 above) are free on 127.0.0.1, below the ephemeral range.
func freePortBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 10000 + 10*mrand.IntN(999)
		if portsFree(base) {
			return base
		}
	}
	t.Fatal("found no free range of ports for a cluster")
	return 0
}

func portsFree(base int) bool {
	for i := range 6 {
		for _, p := range []int{base + i, base + i + 10000} {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				return false
			}
			l.Close() //nolint:errcheck // a listener that was only opened to test the port
		}
	}
	return true
}

// command runs the script with the cluster's settings and args, within
// scriptDeadline, and returns its stdout and stderr.
func (c *cluster) command(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), scriptDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script}, args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// run runs the script, which starts whatever part of the cluster is not
// running, and reads its export lines.
func (c *cluster) run(args ...string) {
	t := c.t
	t.Helper()
	out, stderr, err := c.command(args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.script, err, stderr)
	}
	c.vars = map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			c.vars[name] = strings.Trim(value, `"`)
		}
	}
	c.srv = s3test.Server{Name: "seaweedfs", Endpoint: c.vars["SEAWEED_TEST_ENDPOINT"], Bucket: c.vars["SEAWEED_TEST_BUCKET"],
		Region: c.vars["SEAWEED_TEST_REGION"], AccessKey: c.vars["SEAWEED_TEST_ACCESS_KEY_ID"],
		SecretKey: c.vars["SEAWEED_TEST_SECRET_ACCESS_KEY"]}
	if c.srv.Endpoint == "" || len(c.volumePIDs()) != 3 {
		t.Fatalf("%s printed no endpoint or not 3 volume server pids:\n%s", c.script, out)
	}
}

// volumePIDs are the volume servers' pids as the script last exported them.
func (c *cluster) volumePIDs() []int {
	var pids []int
	for _, f := range strings.Fields(c.vars["SEAWEED_TEST_VOLUME_PIDS"]) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// volumePort is volume server i's HTTP port (the script's layout: the S3
// port, then master, filer and the volume servers).
func (c *cluster) volumePort(i int) int {
	port, err := strconv.Atoi(c.vars["SEAWEED_TEST_PORT"])
	if err != nil {
		c.t.Fatalf("SEAWEED_TEST_PORT %q: %v", c.vars["SEAWEED_TEST_PORT"], err)
	}
	return port + 3 + i
}

// killVolumes sends SIGKILL to n volume servers chosen at random and waits
// until their ports are closed.
func (c *cluster) killVolumes(n int) {
	for _, i := range mrand.Perm(3)[:n] {
		c.kill(i)
	}
}

// kill sends SIGKILL to volume server i and waits until its port is closed.
func (c *cluster) kill(i int) {
	t := c.t
	t.Helper()
	pid := c.volumePIDs()[i]
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("kill -9 volume server %d (pid %d): %v", i+1, pid, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.volumePort(i)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conn.Close() //nolint:errcheck // only probing that the port still answers
		select {
		case <-ctx.Done():
			t.Fatalf("volume server %d (pid %d) still answers on %s after SIGKILL", i+1, pid, addr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("killed volume server %d (pid %d, port %s) with SIGKILL", i+1, pid, addr)
}

// restart runs the script again: it starts the killed volume servers on
// their data directories and ports and reuses the rest.
func (c *cluster) restart() {
	c.t.Helper()
	c.run()
	c.t.Logf("restarted: volume server pids %v", c.volumePIDs())
}

// errOneLine reports whether stderr is one line (a clean failure says what
// went wrong in one line).
func errOneLine(stderr string) error {
	msg := strings.TrimSpace(stderr)
	switch {
	case msg == "":
		return errors.New("nothing on stderr")
	case strings.Contains(msg, "\n"):
		return fmt.Errorf("%d lines on stderr: %q", strings.Count(msg, "\n")+1, msg)
	}
	return nil
}
