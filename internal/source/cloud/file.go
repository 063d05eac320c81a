package cloud

import (
	"bytes"
	"context"
	"crypto/md5"  //nolint:gosec // Drive's checksum of record; checked, not trusted for security
	"crypto/sha1" //nolint:gosec // OneDrive's checksum of record
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"strings"
)

// ErrChecksum means a download's bytes do not match the drive's checksum.
var ErrChecksum = errors.New("downloaded content does not match the drive's checksum")

// ErrShort means a download kept ending before the file's size.
var ErrShort = errors.New("download ended before the file's end")

// maxResumes bounds the downloads of one file that end early (a cut
// stream): each resumes with Range where the last one stopped.
const maxResumes = 8

// file is a download of one drive file. Reads resume after a cut stream;
// a file read whole from its start is checked against the drive's
// checksum at its end.
type file struct {
	ctx     context.Context
	p       Provider
	n       *node
	body    io.ReadCloser
	off     int64
	resumes int
	sum     hash.Hash // nil: nothing to check (no checksum, or not read from the start)
	want    []byte
}

func newFile(ctx context.Context, p Provider, n *node) *file {
	f := &file{ctx: ctx, p: p, n: n}
	f.sum, f.want = checksum(n.item.Hash)
	return f
}

// checksum returns a hash of the kind h names ("sha256:<hex>" ...) and
// the value it must end with; nil when h names nothing we can compute.
func checksum(h string) (hash.Hash, []byte) {
	kind, val, _ := strings.Cut(h, ":")
	var want []byte
	var err error
	if kind == "quickxor" {
		want, err = base64.StdEncoding.DecodeString(val)
	} else {
		want, err = hex.DecodeString(val)
	}
	if err != nil {
		return nil, nil
	}
	switch kind {
	case "sha256":
		return sha256.New(), want
	case "sha1":
		return sha1.New(), want //nolint:gosec // see import
	case "md5":
		return md5.New(), want //nolint:gosec // see import
	case "quickxor":
		return NewQuickXor(), want
	}
	return nil, nil
}

// Read reads the next bytes, resuming a download cut short.
func (f *file) Read(b []byte) (int, error) {
	for {
		if f.body == nil {
			body, err := f.p.Open(f.ctx, f.n.item, f.off)
			if err != nil {
				return 0, err
			}
			f.body = body
		}
		n, err := f.body.Read(b)
		f.off += int64(n)
		if f.sum != nil {
			f.sum.Write(b[:n])
		}
		if err == nil {
			return n, nil
		}
		_ = f.body.Close() // done with this response either way
		f.body = nil
		if errors.Is(err, io.EOF) && (f.p.Exported(f.n.item) || f.off >= f.n.item.Size) {
			return n, f.end()
		}
		// Cut short: an error mid-body, or a clean end before the size.
		if f.ctx.Err() != nil {
			return n, context.Cause(f.ctx)
		}
		if f.resumes++; f.resumes > maxResumes {
			return n, fmt.Errorf("%w at byte %d of %d (%d resumes): %w", ErrShort, f.off, f.n.item.Size, maxResumes, err)
		}
		if n > 0 {
			return n, nil
		}
	}
}

// end checks the checksum of a file read from its start to its end.
func (f *file) end() error {
	if f.sum != nil && !bytes.Equal(f.sum.Sum(nil), f.want) {
		return fmt.Errorf("%w (%s)", ErrChecksum, f.n.item.Hash)
	}
	return io.EOF
}

// Seek moves to offset; the next Read downloads from there.
func (f *file) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	default:
		return f.off, fmt.Errorf("seek from the end of a drive file: %w", errors.ErrUnsupported)
	}
	if offset < 0 {
		return f.off, fs.ErrInvalid
	}
	if offset != f.off {
		if f.body != nil {
			_ = f.body.Close() // a new download starts at offset
			f.body = nil
		}
		f.off = offset
		f.sum, f.want = nil, nil
		if offset == 0 {
			f.sum, f.want = checksum(f.n.item.Hash)
		}
	}
	return f.off, nil
}

// Stat describes the file.
func (f *file) Stat() (fs.FileInfo, error) { return f.n.info(f.p), nil }

// Close ends the download.
func (f *file) Close() error {
	if f.body != nil {
		err := f.body.Close()
		f.body = nil
		return err
	}
	return nil
}

// Body returns the body of resp, a download asked for from byte offset
// on: a 206 answer starts there; a 200 answer (the server ignored Range,
// as an export does) is read past offset first. Other statuses are
// errors naming the status.
func Body(resp *http.Response, offset int64) (io.ReadCloser, error) {
	switch {
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		return resp.Body, nil
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent:
		if offset > 0 {
			if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
				_ = resp.Body.Close() // failing anyway
				return nil, err
			}
		}
		return resp.Body, nil
	}
	_ = resp.Body.Close() // the status says it all
	return nil, fmt.Errorf("download: %s", resp.Status)
}

// RangeHeader is the Range header asking for the bytes from offset on, ""
// for the whole content.
func RangeHeader(offset int64) string {
	if offset == 0 {
		return ""
	}
	return fmt.Sprintf("bytes=%d-", offset)
}
