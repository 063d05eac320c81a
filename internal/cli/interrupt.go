package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ExitInterruptedTwice is the exit code after a second interrupt: the
// shell's 128 + SIGINT, as after the first (ExitInterrupted), which stops
// cleanly.
const ExitInterruptedTwice = ExitInterrupted

// InterruptContext returns a context that the first SIGINT (Ctrl-C) or
// SIGTERM cancels, so that the command stops cleanly and exits
// ExitInterrupted: it saves no snapshot, indexes the packs a backup or copy
// already stored (so that a re-run reuses them), removes its temporary files
// and releases its lock, which can take up to the store's response timeout
// when the store no longer answers. A second signal calls
// exit(ExitInterruptedTwice) at once: every store write is atomic, so what
// is left is what the first interruption leaves, plus the lock if its
// release had not been sent (it expires after its TTL, as a crashed
// process's does) and temporary files that prune removes. stop releases the
// signals. On Windows Go delivers Ctrl-C and Ctrl-Break as os.Interrupt
// (SIGINT) and the console's close, logoff and shutdown events as SIGTERM.
func InterruptContext(parent context.Context, stderr io.Writer, exit func(code int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "cloudstic: interrupted: stopping (interrupt again to quit at once)")
		cancel()
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "cloudstic: interrupted again: quitting at once")
		exit(ExitInterruptedTwice)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
