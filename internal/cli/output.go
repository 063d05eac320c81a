package cli

import (
	"io"
	"sync"
)

// recordingWriter is the command's stdout: it passes writes through and
// keeps the first error, so that a listing or JSON document that could not
// be written whole (a full disk, a closed pipe) makes the command fail when
// it ends instead of each print checking its own error.
type recordingWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

// Write writes p, or fails at once after an earlier write failed: the
// output is already incomplete.
func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.w.Write(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// fail records err as the output's failure unless one is recorded already.
func (r *recordingWriter) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// failed returns the first error writing the output.
func (r *recordingWriter) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// outputFailed records that stdout could not be written in full; the
// command then ends with exit code 1.
func (a *app) outputFailed(err error) {
	if rw, ok := a.io.Stdout.(*recordingWriter); ok {
		rw.fail(err)
	}
}

// outputErr returns the first error writing stdout, if any.
func (a *app) outputErr() error {
	if rw, ok := a.io.Stdout.(*recordingWriter); ok {
		return rw.failed()
	}
	return nil
}
