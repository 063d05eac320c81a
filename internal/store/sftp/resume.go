package sftp

import (
	"errors"
	"fmt"
	"io"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/store"
)

// lost reports whether the read error err means the stream's connection
// was lost. io.EOF is both what a read at the end of a file returns and
// what a request sent on a closed session may: a stream reads only within
// the file's size, so a live connection's io.EOF means the file shrank,
// which the client's fstat on the same handle tells apart.
func (r *remoteRange) lost(err error) bool {
	if !r.c.Lost(err) {
		return false
	}
	if !errors.Is(err, io.EOF) || r.c.IsDead() || r.c.Closed() {
		return true
	}
	_, serr := r.f.Stat()
	return r.c.Lost(serr)
}

// mayRetry reports whether the policy of do allows a read that failed on a
// lost connection another try on a new one: ctx has not ended and the
// server did not stop answering (dialling it again would double the wait
// before the command fails).
func (r *remoteRange) mayRetry() bool { return r.ctx.Err() == nil && !r.c.TimedOut() }

// resume replaces the lost connection (unless another operation already
// did), opens the file again on the new one and checks that it is the
// file the stream began to read. Reads go on at r.off.
func (r *remoteRange) resume() error {
	c, err := r.s.reconnect(r.ctx, r.c)
	if err != nil {
		return err
	}
	var f *sftp.File
	err = r.s.run(r.ctx, c, func(sc *sftp.Client) error {
		var err error
		f, err = r.reopen(sc)
		return err
	})
	if err != nil {
		return openErr(r.key, err)
	}
	// The old handle went with its connection: closing it only fails.
	_ = r.f.Close()
	r.c, r.f = c, f
	r.s.notef("sftp: reading %s again from offset %d on a new connection", r.key, r.off)
	return nil
}

// reopen opens the stream's file on c and checks its size and mtime.
func (r *remoteRange) reopen(c *sftp.Client) (*sftp.File, error) {
	f, err := c.Open(r.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case fi.IsDir():
		err = errIsDir
	case fi.Size() != r.fi.Size() || !fi.ModTime().Equal(r.fi.ModTime()):
		err = fmt.Errorf("%s: %d bytes of %v when the stream was opened, now %d of %v: %w",
			r.key, r.fi.Size(), r.fi.ModTime(), fi.Size(), fi.ModTime(), store.ErrChanged)
	}
	if err != nil {
		f.Close() //nolint:errcheck // read-only handle; err is the one to report
		return nil, err
	}
	return f, nil
}
