//go:build unix

package crash

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// binary is the cloudstic executable TestMain builds.
var binary string

// key is the platform key of every test repository (no argon2 per run).
var key = strings.Repeat("5a", 32)

func TestMain(m *testing.M) {
	// The fault-injecting build of cloudstic: the released binary has no
	// fault switch.
	os.Exit(testbin.MainPackage(m, "./test/crash/faultbin", func(_, bin string) { binary = bin }))
}

// testSeed is the seed of a test: CLOUDSTIC_CRASH_SEED when set, else
// the time; it is logged so a failure can be replayed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CLOUDSTIC_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CLOUDSTIC_CRASH_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (rerun with CLOUDSTIC_CRASH_SEED=%d)", seed, seed)
	return seed
}

// result is what one run of the binary produced.
type result struct {
	args           []string
	stdout, stderr string
	code           int  // exit code, -1 when killed by a signal
	killed         bool // ended by SIGKILL
}

func (r result) String() string {
	return fmt.Sprintf("cloudstic %q: exit %d (killed: %v)\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.killed, r.stdout, r.stderr)
}

// proc is a started run.
type proc struct {
	cmd            *exec.Cmd
	args           []string
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// env is the environment of every run: the test's own without CLOUDSTIC_*
// settings, plus the repository and, when faults is set, the fault hook.
func env(store, faults string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLOUDSTIC_") {
			out = append(out, kv)
		}
	}
	out = append(out, "CLOUDSTIC_STORE=local:"+store, "CLOUDSTIC_ENCRYPTION_KEY="+key)
	if faults != "" {
		out = append(out, "CLOUDSTIC_TEST_FAULTS="+faults)
	}
	return out
}

// start starts the binary on store with the given fault spec ("" none).
func start(t *testing.T, store, faults string, args ...string) *proc {
	t.Helper()
	return startEnv(t, env(store, faults), args...)
}

// startEnv starts the binary with the environment environ.
func startEnv(t *testing.T, environ []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), args: args, done: make(chan struct{})}
	p.cmd.Env = environ
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting cloudstic %q: %v", args, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	return p
}

// wait waits for the run to end and returns its result.
func (p *proc) wait(t *testing.T) result {
	t.Helper()
	<-p.done
	res := result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String()}
	var exit *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &exit):
		res.code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			res.killed = true
		}
	default:
		t.Fatalf("running cloudstic %q: %v", p.args, p.err)
	}
	return res
}

// killAfter SIGKILLs the run after d unless it ended first.
func (p *proc) killAfter(t *testing.T, d time.Duration) result {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		if err := p.cmd.Process.Kill(); err != nil {
			t.Logf("kill: %v", err) // it may have exited just now
		}
	}
	return p.wait(t)
}

// run runs the binary to the end.
func run(t *testing.T, store, faults string, args ...string) result {
	t.Helper()
	return start(t, store, faults, args...).wait(t)
}

// mustRun runs the binary without faults and fails the test unless it exits 0.
func mustRun(t *testing.T, store string, args ...string) result {
	t.Helper()
	res := run(t, store, "", args...)
	if res.code != 0 || res.killed {
		t.Fatalf("want exit 0, got %v", res)
	}
	return res
}
