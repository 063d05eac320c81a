//go:build windows

package lock

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// procHelperEnv makes TestProcessHelper run.
const procHelperEnv = "CLOUDSTIC_LOCK_PROC_HELPER"

// TestProcessHelper is the child process of TestWindowsProcessState: it
// prints how it identifies itself (one line of JSON) and runs until its
// standard input is closed. It does nothing in a normal test run.
func TestProcessHelper(t *testing.T) {
	if os.Getenv(procHelperEnv) == "" {
		t.Skip("helper for TestWindowsProcessState")
	}
	self, ok := platformProcesses().self()
	if !ok {
		t.Fatal("the helper cannot identify itself")
	}
	if err := json.NewEncoder(os.Stdout).Encode(self); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
}

// startHelper starts TestProcessHelper and returns it, the pipe to its
// standard input (closing it ends the child) and its own record.
func startHelper(t *testing.T) (*exec.Cmd, io.WriteCloser, procID) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestProcessHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), procHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var rec procID
	if err != nil || json.Unmarshal([]byte(line), &rec) != nil {
		t.Fatalf("helper said %q, %v", line, err)
	}
	if rec.PID != cmd.Process.Pid {
		t.Fatalf("helper recorded pid %d, started as %d", rec.PID, cmd.Process.Pid)
	}
	return cmd, in, rec
}

// TestWindowsSelf: this process identifies itself, the same way each
// time, and is alive; with another start time it is a gone process whose
// pid was reused.
func TestWindowsSelf(t *testing.T) {
	ps := platformProcesses()
	self, ok := ps.self()
	if !ok {
		t.Fatal("self is not ok")
	}
	again, ok := ps.self()
	if !ok || again != self {
		t.Fatalf("self changed: %+v, then %+v (ok %v)", self, again, ok)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if self.Host != host || self.PID != os.Getpid() || self.Start == 0 ||
		!strings.HasPrefix(self.BootID, "boot-time:") || !strings.HasPrefix(self.PIDNS, "windows-session:") {
		t.Fatalf("self is %+v; want host %q, pid %d, a start, a boot time and a session", self, host, os.Getpid())
	}
	t.Logf("self: %+v", self)
	if got := ps.state(self); got != procAlive {
		t.Errorf("this process judged %d, want alive", got)
	}
	reused := self
	reused.Start++
	if got := ps.state(reused); got != procGone {
		t.Errorf("this pid with another start judged %d, want gone", got)
	}
}

// TestWindowsProcessState: another process of this boot and session
// records the same host, boot and session; while it runs it is alive
// (and gone under another start time); once exited it is gone, while a
// handle of ours keeps its process object (its exit code says so) and
// after we close it (another handle, os.Process's or Wine's, may still
// keep the object: then again by its exit code; else OpenProcess fails).
// Pids no process has are gone; pid 0 and negative pids are never judged.
func TestWindowsProcessState(t *testing.T) {
	ps := platformProcesses()
	self, ok := ps.self()
	if !ok {
		t.Fatal("self is not ok")
	}
	cmd, in, child := startHelper(t)
	if child.Host != self.Host || child.BootID != self.BootID || child.PIDNS != self.PIDNS {
		t.Fatalf("child %+v and this process %+v disagree on host, boot or session", child, self)
	}
	if child.Start == self.Start && child.PID == self.PID {
		t.Fatalf("child recorded this process: %+v", child)
	}
	with := func(edit func(p *procID)) procID { p := child; edit(&p); return p }
	same := func(*procID) {}
	live := []struct {
		name string
		p    procID
		want procState
	}{
		{"live child", child, procAlive},
		{"live child's pid, another start", with(func(p *procID) { p.Start++ }), procGone},
		{"live child's pid, start 1", with(func(p *procID) { p.Start = 1 }), procGone},
		{"pid 0", with(func(p *procID) { p.PID = 0 }), procUnknown},
		{"negative pid", with(func(p *procID) { p.PID = -4 }), procUnknown},
		{"pid no process has", with(func(p *procID) { p.PID = 0x7FFFFFFC }), procGone},
	}
	for _, c := range live {
		t.Run(c.name, func(t *testing.T) {
			if got := ps.state(c.p); got != c.want {
				t.Errorf("%+v judged %d, want %d", c.p, got, c.want)
			}
		})
	}

	// A handle of ours keeps the exited child's process object, and so its
	// pid, until closed.
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(child.PID))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	exited := []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"exited child, its object kept by a handle", func(t *testing.T) {
			h2, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(child.PID))
			if err != nil {
				t.Fatalf("the exited child's pid does not open: %v", err)
			}
			_ = windows.CloseHandle(h2)
		}},
		{"exited child, our handle closed", func(*testing.T) { _ = windows.CloseHandle(h) }},
	}
	for _, c := range exited {
		t.Run(c.name, func(t *testing.T) {
			c.setup(t)
			if got := ps.state(with(same)); got != procGone {
				t.Errorf("judged %d, want gone", got)
			}
		})
	}
}
