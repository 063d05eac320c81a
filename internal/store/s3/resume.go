package s3

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

func (b *slotBody) Read(p []byte) (int, error) {
	if err := b.failed; err != nil {
		b.failed = nil
		if rerr := b.resume(); rerr != nil {
			return 0, b.readErr(err, rerr)
		}
		return b.read(p, false)
	}
	return b.read(p, true)
}

// read reads the body. A read that failed on a broken connection before
// any byte is, if retry, tried once more on a new request; one that brought
// bytes returns them, and the next Read resumes.
func (b *slotBody) read(p []byte, retry bool) (int, error) {
	n, err := b.body.Read(p)
	b.off += int64(n)
	switch {
	case err == nil || err == io.EOF: //nolint:errorlint // io.EOF is returned unwrapped by contract
		return n, err
	case !b.resumable(err):
		return n, b.readErr(err, nil)
	case n > 0:
		b.failed = err
		return n, nil
	case !retry:
		return 0, b.readErr(err, nil)
	}
	if rerr := b.resume(); rerr != nil {
		return 0, b.readErr(err, rerr)
	}
	return b.read(p, false)
}

// resumable reports whether the body's read error err is a broken
// connection worth a new request: not a timeout (the SDK does not retry
// those either: see noRetryOnTimeout), and ctx has not ended.
func (b *slotBody) resumable(err error) bool {
	return b.ctx.Err() == nil && !isTimeout(err) && isConnBroken(err)
}

// resume asks for the rest of the range again.
func (b *slotBody) resume() error {
	// The connection is broken: its close error says nothing new.
	_ = b.body.Close()
	if b.s.notef != nil {
		b.s.notef("s3: reading %s again from offset %d after a broken connection", b.key, b.off)
	}
	return b.get()
}

// readErr is the error of a failed read: err, the body's (with ctx's error
// if ctx ended), and rerr, the failed resume's.
func (b *slotBody) readErr(err, rerr error) error {
	err = b.s.timeoutErr(b.ctx, err)
	if cerr := b.ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%v)", cerr, err)
	}
	if rerr != nil {
		return fmt.Errorf("s3: read range %s on %s: %w; reading it again: %w", b.key, b.s.Describe(), err, rerr)
	}
	return fmt.Errorf("s3: read range %s on %s: %w", b.key, b.s.Describe(), err)
}

// isConnBroken reports an error reading a response body that means its
// connection broke: reset, closed, or ended before the body did.
func isConnBroken(err error) bool {
	var ne *net.OpError
	return errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne)
}
