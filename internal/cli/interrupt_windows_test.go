package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"
)

// ctrlChildEnv makes this test binary the child of TestConsoleCtrlEvents.
const ctrlChildEnv = "CLOUDSTIC_TEST_CTRL_CHILD"

// TestConsoleCtrlEvents: Ctrl-Break, sent as a console control event to a
// process group (what a console sends on the key), stops a process that
// waits under InterruptContext cleanly: its context is cancelled, it says
// so on stderr and exits ExitInterrupted. Go delivers Ctrl-C and
// Ctrl-Break alike as os.Interrupt (the runtime's ctrlHandler). It skips
// where the event cannot be sent: Wine 8 refuses CTRL_BREAK_EVENT
// (invalid handle), and takes a CTRL_C_EVENT for another process group
// but never delivers it, so it runs on Windows only.
func TestConsoleCtrlEvents(t *testing.T) {
	if os.Getenv(ctrlChildEnv) != "" {
		ctrlChild()
		return
	}
	if err := attachConsole(); err != nil {
		t.Skipf("no console to send control events in: %v", err)
	}
	tests := []struct {
		name  string
		event uint32
	}{
		// CTRL_C_EVENT cannot be sent to a new process group: its
		// processes start with Ctrl-C ignored. Ctrl-Break reaches them.
		{"ctrl-break", windows.CTRL_BREAK_EVENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestConsoleCtrlEvents$", "-test.count=1")
			cmd.Env = append(os.Environ(), ctrlChildEnv+"=1")
			cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "ready" {
				_ = cmd.Process.Kill()
				t.Fatalf("child did not get ready: %q %v; stderr:\n%s", lines.Text(), lines.Err(), stderr.String())
			}
			if err := windows.GenerateConsoleCtrlEvent(tt.event, uint32(cmd.Process.Pid)); err != nil { //nolint:gosec // a pid is positive
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Skipf("Ctrl-Break cannot be sent here (Wine 8 does not send it): %v", err)
			}
			for lines.Scan() { // until the child closes its stdout
			}
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted || !strings.Contains(stderr.String(), "cloudstic: interrupted: stopping") {
				t.Errorf("child ended with %v, want exit %d after a clean stop; stderr:\n%s", err, ExitInterrupted, stderr.String())
			}
		})
	}
}

// ctrlChild waits under InterruptContext until it is cancelled, then
// exits ExitInterrupted as a command that stopped cleanly does.
func ctrlChild() {
	ctx, stop := InterruptContext(context.Background(), os.Stderr, os.Exit)
	fmt.Println("ready")
	<-ctx.Done()
	stop()
	os.Exit(ExitInterrupted)
}

// attachConsole gives this process a console of its own: control events
// travel through one, and a test run may have none or one it cannot send
// events in (Wine's, when started from a shell).
func attachConsole() error {
	kernel32 := windows.NewLazySystemDLL("kernel32.dll")
	_, _, _ = kernel32.NewProc("FreeConsole").Call() // fails when there is none: fine
	if r, _, err := kernel32.NewProc("AllocConsole").Call(); r == 0 {
		return fmt.Errorf("AllocConsole: %w", err)
	}
	return nil
}
