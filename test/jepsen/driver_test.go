//go:build unix

package jepsen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// Settings of a run: the short run is part of CI; scripts/jepsen.sh runs a
// long one by raising the counts.
const (
	defaultClients = 6
	defaultOps     = 6 // per client
	// processDeadline: a process still running after this has hung.
	processDeadline = 4 * time.Minute
)

// run is one network-fault test run.
type run struct {
	t    *testing.T
	seed uint64
	dir  string
	// storeArgs are the flags that reach the repository through addr (the
	// server's or a proxy's host:port).
	storeArgs func(addr string) []string
	direct    string // the server's host:port, for setup and final checks
	history   string

	mu        sync.Mutex
	snapshots map[string]snap // of backups that reported success, by id
	outcomes  []outcome
	faults    map[string]int
}

// snap is what a successful backup stored: its source and the files in it.
type snap struct {
	src   string
	files map[string][]byte
}

// outcome is how one client process ended.
type outcome struct {
	args   []string
	code   int
	stderr string
	hung   bool
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func needEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if os.Getenv(n) == "" {
			t.Fatalf("%s unset: start the servers with eval \"$(scripts/sftp-server.sh)\"; eval \"$(scripts/toxiproxy-server.sh)\"", n)
		}
	}
}

// TestNetworkFaults runs client processes looping over backup, forget
// -prune, prune and restore against each S3 test server (versitygw, a
// SeaweedFS cluster) and against the SFTP server, each client through its
// own Toxiproxy proxy, while a nemesis
// injects latency above the lease, slow bandwidth, connection resets,
// partitions (one outlasting the lease) and stops a process for longer than
// the lease. The recorded history must show no overlapping holdings, no
// write past a lease's safe end and no process exiting 0 after losing its
// lease while working; every backup that reported success must be listed
// and restore byte for byte; check -read-data must be clean; every failed
// process must say why in one line, and none may hang.
func TestNetworkFaults(t *testing.T) {
	needEnv(t, "SFTP_TEST_ADDR", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_PATH", "SFTP_TEST_HOST_PUBKEY", "TOXIPROXY_TEST_ADDR")
	servers := s3test.Servers(t)
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("CLOUDSTIC_JEPSEN_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (replay with CLOUDSTIC_JEPSEN_SEED=%d)", seed, seed)
	// Each backend's run has its own proxies, repository and history; the
	// runs mostly wait out faults longer than the lease, so they run at once.
	backends := []string{"sftp"}
	for _, srv := range servers {
		backends = append(backends, srv.Name)
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			r := &run{t: t, seed: seed, dir: t.TempDir(), snapshots: map[string]snap{}, faults: map[string]int{}}
			r.history = filepath.Join(r.dir, "history.jsonl")
			r.exercise(backend, servers)
		})
	}
}

// exercise sets up the proxies and the repository on backend ("sftp" or the
// name of one of servers), runs the clients and the nemesis, and checks the
// outcome.
func (r *run) exercise(backend string, servers []s3test.Server) {
	t := r.t
	switch backend {
	case "sftp":
		r.direct = os.Getenv("SFTP_TEST_ADDR")
		knownHosts := filepath.Join(r.dir, "known_hosts")
		repo := fmt.Sprintf("%s/jepsen-%d", os.Getenv("SFTP_TEST_PATH"), r.seed) // absolute, as the URL's path is
		r.storeArgs = func(addr string) []string {
			return []string{"-store", "sftp://" + os.Getenv("SFTP_TEST_USER") + "@" + addr + repo,
				"-store-sftp-key", os.Getenv("SFTP_TEST_KEY"), "-store-sftp-known-hosts", knownHosts}
		}
	default:
		i := slices.IndexFunc(servers, func(s s3test.Server) bool { return s.Name == backend })
		if i < 0 {
			t.Fatalf("no S3 test server named %q", backend)
		}
		srv := servers[i]
		u, err := url.Parse(srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		r.direct = u.Host
		prefix := fmt.Sprintf("jepsen-%d", r.seed)
		srv.RemoveAtCleanup(t, prefix)
		repo := fmt.Sprintf("s3:%s/%s", srv.Bucket, prefix)
		r.storeArgs = func(addr string) []string {
			return []string{"-store", repo, "-s3-endpoint", "http://" + addr, "-s3-region", srv.Region,
				"-s3-access-key", srv.AccessKey, "-s3-secret-key", srv.SecretKey}
		}
	}
	clients, ops := envInt("CLOUDSTIC_JEPSEN_CLIENTS", defaultClients), envInt("CLOUDSTIC_JEPSEN_OPS", defaultOps)
	tp := toxiproxy.NewClient(os.Getenv("TOXIPROXY_TEST_ADDR"))
	proxies := make([]*toxiproxy.Proxy, clients)
	hosts := []string{r.direct}
	for i := range proxies {
		p, err := tp.CreateProxy(fmt.Sprintf("jepsen-%s-%d-c%d", backend, r.seed, i), "127.0.0.1:0", r.direct)
		if err != nil {
			t.Fatalf("toxiproxy: %v", err)
		}
		defer p.Delete() //nolint:errcheck // the server is stopped after the tests anyway
		proxies[i] = p
		hosts = append(hosts, p.Listen)
	}
	if backend == "sftp" {
		// The proxies are the same server on other ports.
		var kh strings.Builder
		for _, h := range hosts {
			host, port, _ := strings.Cut(h, ":")
			fmt.Fprintf(&kh, "[%s]:%s %s\n", host, port, os.Getenv("SFTP_TEST_HOST_PUBKEY"))
		}
		if err := os.WriteFile(filepath.Join(r.dir, "known_hosts"), []byte(kh.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, stderr := r.cli(context.Background(), r.direct, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	procs := make([]*processSlot, clients)
	for i := range procs {
		procs[i] = &processSlot{}
	}
	nemesisDone := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(nemesisDone)
		r.nemesis(proxies, procs, stop)
	}()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.client(i, ops, proxies[i].Listen, procs[i])
		}()
	}
	wg.Wait()
	close(stop)
	<-nemesisDone
	r.finalChecks()
}

// processSlot holds a client's running process, for the nemesis to stop.
type processSlot struct {
	mu  sync.Mutex
	cmd *exec.Cmd
}

// cli runs the binary against the repository through endpoint, recording
// its lease history, and returns its exit code and stderr.
func (r *run) cli(ctx context.Context, endpoint string, args ...string) (int, string) {
	code, _, stderr := r.cliOut(ctx, nil, endpoint, args...)
	return code, stderr
}

func (r *run) cliOut(ctx context.Context, slot *processSlot, endpoint string, args ...string) (int, string, string) {
	ctx, cancel := context.WithTimeout(ctx, processDeadline)
	defer cancel()
	full := append(append(append([]string{}, args...), r.storeArgs(endpoint)...), "-no-cache")
	cmd := exec.CommandContext(ctx, binary, full...)
	cmd.Env = append(os.Environ(), "CLOUDSTIC_PASSWORD=jepsen", "CLOUDSTIC_TEST_HISTORY="+r.history)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		r.t.Errorf("starting %v: %v", args, err)
		return -1, "", ""
	}
	if slot != nil {
		slot.mu.Lock()
		slot.cmd = cmd
		slot.mu.Unlock()
	}
	err := cmd.Wait()
	if slot != nil {
		slot.mu.Lock()
		slot.cmd = nil
		slot.mu.Unlock()
	}
	code := 0
	if err != nil {
		code = -1
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		}
	}
	r.mu.Lock()
	r.outcomes = append(r.outcomes, outcome{args: args, code: code, stderr: errb.String(), hung: ctx.Err() != nil})
	r.mu.Unlock()
	return code, out.String(), errb.String()
}

// client runs ops operations of client i through its proxy.
func (r *run) client(i, ops int, endpoint string, slot *processSlot) {
	rnd := mrand.New(mrand.NewPCG(r.seed, uint64(i)))
	src := filepath.Join(r.dir, fmt.Sprintf("src-%d", i))
	if err := os.MkdirAll(src, 0o755); err != nil {
		r.t.Error(err)
		return
	}
	var last string
	ctx := context.Background()
	for n := range ops {
		switch p := rnd.IntN(10); {
		case p < 5 || last == "":
			r.backup(ctx, rnd, slot, endpoint, src, n)
			last = r.lastSnapshot(src)
		case p < 7:
			// -quiet: prune's progress lines ("marking: ...") go to
			// stderr, where a prune that fails after them would show
			// more than its one error line.
			r.cliOut(ctx, slot, endpoint, "prune", "-quiet", "-lock-wait", "20s")
		case p < 8:
			// Keep them all: the check that every snapshot stays
			// listed is exact, and forget -prune still takes its lock.
			r.cliOut(ctx, slot, endpoint, "forget", "-quiet", "-keep-last", "1000", "-prune", "-lock-wait", "20s")
		default:
			r.restore(ctx, slot, endpoint, last)
		}
	}
}

// backup adds a file to the client's tree and backs it up; a snapshot whose
// backup reported success is remembered with the tree's content.
func (r *run) backup(ctx context.Context, rnd *mrand.Rand, slot *processSlot, endpoint, src string, n int) {
	data := make([]byte, 1+rnd.IntN(64<<10))
	for i := range data {
		data[i] = byte(rnd.Uint32())
	}
	if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%03d", n)), data, 0o644); err != nil {
		r.t.Error(err)
		return
	}
	tree, err := readTree(src)
	if err != nil {
		r.t.Error(err)
		return
	}
	code, stdout, _ := r.cliOut(ctx, slot, endpoint, "backup", "-source", "local:"+src, "-json", "-lock-wait", "20s")
	if code != 0 {
		return
	}
	var res struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.SnapshotID == "" {
		r.t.Errorf("backup reported success without a snapshot id: %q (%v)", stdout, err)
		return
	}
	r.mu.Lock()
	r.snapshots[res.SnapshotID] = snap{src: src, files: tree}
	r.mu.Unlock()
}

// lastSnapshot is the newest remembered snapshot of src ("" if none).
func (r *run) lastSnapshot(src string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Each backup adds a file: the newest snapshot has the most.
	var best string
	for id, s := range r.snapshots {
		if s.src == src && len(s.files) > len(r.snapshots[best].files) {
			best = id
		}
	}
	return best
}

// restore restores a snapshot and compares it when the restore succeeded.
func (r *run) restore(ctx context.Context, slot *processSlot, endpoint, id string) {
	if id == "" {
		return
	}
	out := filepath.Join(r.dir, "restore-"+strconv.FormatUint(mrand.Uint64(), 16))
	if code, _, _ := r.cliOut(ctx, slot, endpoint, "restore", id, "-output", out, "-lock-wait", "20s"); code == 0 {
		r.compare(id, out)
	}
}

// compare checks a restored directory against a remembered snapshot.
func (r *run) compare(id, out string) {
	r.mu.Lock()
	want := r.snapshots[id]
	r.mu.Unlock()
	got, err := readTree(out)
	if err != nil {
		r.t.Errorf("snapshot %s: reading the restore: %v", id, err)
		return
	}
	for name, data := range want.files {
		if !bytes.Equal(got[name], data) {
			r.t.Errorf("snapshot %s: %s restored as %d bytes, backed up %d", id, name, len(got[name]), len(data))
		}
	}
}

// readTree reads the regular files directly in dir.
func readTree(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	tree := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		tree[e.Name()] = data
	}
	return tree, nil
}

// finalChecks verifies the history, the processes' outcomes and the
// repository, and reports the run's figures.
func (r *run) finalChecks() {
	t := r.t
	f, err := os.Open(r.history)
	if err != nil {
		t.Fatal(err)
	}
	events, err := Read(f)
	f.Close() //nolint:errcheck // read-only
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(events)
	for _, v := range rep.Violations {
		t.Errorf("history: %s", v.What)
	}
	failed := 0
	why := map[string]int{} // failures by the start of their message
	for _, o := range r.outcomes {
		switch {
		case o.hung:
			t.Errorf("%v hung past its %v deadline", o.args, processDeadline)
		case o.code != 0:
			failed++
			msg := strings.TrimSpace(o.stderr)
			if len(msg) > 90 {
				msg = msg[:90]
			}
			why[msg]++
			if lines := errorLines(o.stderr); lines != 1 {
				t.Errorf("%v failed (exit %d) with %d error lines instead of one: %q", o.args, o.code, lines, o.stderr)
			}
		}
	}
	code, stdout, stderr := r.cliOut(context.Background(), nil, r.direct, "list", "-json")
	if code != 0 {
		t.Fatalf("list: %s", stderr)
	}
	r.mu.Lock()
	ids := make([]string, 0, len(r.snapshots))
	for id := range r.snapshots {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		if !strings.Contains(stdout, id) {
			t.Errorf("snapshot %s, whose backup reported success, is not listed", id)
			continue
		}
		out := filepath.Join(r.dir, "final-"+id)
		if code, _, stderr := r.cliOut(context.Background(), nil, r.direct, "restore", id, "-output", out, "-lock-wait", "2m"); code != 0 {
			t.Errorf("restoring %s: %s", id, stderr)
			continue
		}
		r.compare(id, out)
	}
	if code, _, stderr := r.cliOut(context.Background(), nil, r.direct, "check", "-read-data"); code != 0 {
		t.Errorf("check -read-data: %s", stderr)
	}
	for msg, n := range why {
		t.Logf("%3d x %s", n, msg)
	}
	t.Logf("%d processes (%d failed, as faults make them), faults %v, %d acquisitions (%d exclusive), %d leases lost (%d processes lost theirs after their last request), %d writes, %d snapshots verified, %d violations",
		len(r.outcomes), failed, r.faults, rep.Acquisitions, rep.Exclusive, rep.Lost, rep.LostInTime, rep.Writes, len(ids), len(rep.Violations))
}
