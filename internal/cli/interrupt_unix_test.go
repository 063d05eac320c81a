//go:build unix

package cli

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// syncBuffer is a strings.Builder safe for InterruptContext's goroutine
// and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInterruptContextSignals: SIGINT (Ctrl-C; on Windows also Ctrl-Break)
// and SIGTERM (on Windows: the console closed, logoff, shutdown) each
// cancel the context; the same signal again quits at once with
// ExitInterruptedTwice.
func TestInterruptContextSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			var stderr syncBuffer
			exited := make(chan int, 1)
			ctx, stop := InterruptContext(context.Background(), &stderr, func(code int) { exited <- code })
			defer stop()
			if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			<-ctx.Done()
			if !strings.Contains(stderr.String(), "cloudstic: interrupted: stopping") {
				t.Errorf("stderr %q, want the stopping notice", stderr.String())
			}
			if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			if code := <-exited; code != ExitInterruptedTwice {
				t.Errorf("second %v: exit %d, want %d", sig, code, ExitInterruptedTwice)
			}
		})
	}
}
