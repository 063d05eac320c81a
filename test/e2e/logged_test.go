//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// loggedProcess is a started cloudstic process whose stderr goes to a
// file: read after a line is known to be written, it holds that line.
type loggedProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	path   string
	exited chan struct{} // closed once the process ended; cmd.ProcessState is then set
}

// startLogged starts cloudstic with args, its stderr to a file, and waits
// for it in the background.
func startLogged(t *testing.T, args []string) *loggedProcess {
	t.Helper()
	p := &loggedProcess{t: t, path: filepath.Join(t.TempDir(), "stderr"), exited: make(chan struct{})}
	errFile, err := os.Create(p.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = errFile.Close() }) // read-only use after the process ended
	p.cmd = runOpts{}.cmd(args)
	p.cmd.Stderr = errFile
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit code is read from ProcessState by the caller
		close(p.exited)
	}()
	return p
}

// stderr is what the process wrote to stderr so far.
func (p *loggedProcess) stderr() string {
	b, err := os.ReadFile(p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	return string(b)
}
