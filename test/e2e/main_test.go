//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// binary is the cloudstic executable TestMain builds.
var binary string

// TestMain builds the binary. testbin.Main also points XDG_CACHE_HOME at
// its temporary directory, which baseEnv keeps: the metadata cache of
// remote repositories is exercised, and nothing lands in the user's own
// cache.
func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, func(_, bin string) { binary = bin }))
}

// result is what one run of the binary produced.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("cloudstic %q: exit %d\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.stdout, r.stderr)
}

// runOpts tweak one run.
type runOpts struct {
	env  []string // extra KEY=VALUE
	dir  string   // working directory
	cred *syscall.Credential
}

// baseEnv is the test process environment without anything that would
// configure cloudstic behind the test's back.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CLOUDSTIC_") || strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "B2_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// cmd builds the command for one run.
func (o runOpts) cmd(args []string) *exec.Cmd {
	c := exec.Command(binary, args...)
	c.Env = append(baseEnv(), o.env...)
	c.Dir = o.dir
	if o.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: o.cred}
	}
	return c
}

// runWith runs the binary and returns what it did; it fails the test only
// if the binary could not be run at all.
func runWith(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	res := result{args: args}
	res.stdout, res.stderr, res.code = testbin.Output(t, o.cmd(args))
	return res
}

// run runs the binary with no extra settings.
func run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, runOpts{}, args...)
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	res := run(t, args...)
	if res.code != 0 {
		t.Fatalf("want exit 0, got %v", res)
	}
	return res
}

// wantCode fails the test unless res exited with code.
func wantCode(t *testing.T, res result, code int) {
	t.Helper()
	if res.code != code {
		t.Fatalf("want exit %d, got %v", code, res)
	}
}

// wantOneLineError checks a failed run printed exactly one line on stderr
// containing every one of subs.
func wantOneLineError(t *testing.T, res result, subs ...string) {
	t.Helper()
	// Runs that give -password on the command line also get its one-line
	// warning (other users can read a command line); the error is the rest.
	msg := strings.TrimRight(withoutPasswordWarning(res.stderr), "\n")
	if msg == "" || strings.Contains(msg, "\n") {
		t.Errorf("want a one-line error on stderr, got %v", res)
	}
	for _, s := range subs {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q does not mention %q", msg, s)
		}
	}
}

// decodeJSON checks stdout is exactly one JSON document and decodes it
// into v.
func decodeJSON(t *testing.T, res result, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(res.stdout))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%v", err, res)
	}
	if rest := strings.TrimSpace(res.stdout[dec.InputOffset():]); rest != "" {
		t.Fatalf("stdout has %q after the JSON document", rest)
	}
}

// withoutPasswordWarning removes the warning a -password on the command
// line prints.
func withoutPasswordWarning(stderr string) string {
	first, rest, _ := strings.Cut(stderr, "\n")
	if strings.HasPrefix(first, "warning: -password on the command line") {
		return rest
	}
	return stderr
}
