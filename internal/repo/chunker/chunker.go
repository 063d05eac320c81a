package chunker

import (
	"errors"
	"fmt"
	"io"
)

// maxEmptyReads is how many consecutive (0, nil) reads are tolerated before
// giving up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// Chunker splits a stream into content-defined chunks. It buffers at most
// 2*Max bytes whatever the stream's length. A Chunker is not safe for
// concurrent use.
type Chunker struct {
	r     io.Reader
	g     *Gear
	p     Params
	buf   []byte // len(buf) == 2*p.Max
	start int    // first unreturned byte in buf
	end   int    // end of the buffered data in buf
	eof   bool   // r has returned io.EOF
	err   error  // sticky error: a read error or io.EOF once all is returned
}

// New returns a Chunker reading r with gear table g and parameters p. It
// fails with ErrInvalidParams if p is invalid or g is nil.
func New(r io.Reader, g *Gear, p Params) (*Chunker, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("%w: nil gear table", ErrInvalidParams)
	}
	c := &Chunker{g: g, p: p, buf: make([]byte, 2*p.Max)}
	c.Reset(r)
	return c, nil
}

// Reset makes c read the next stream from r, keeping its buffer, gear table
// and parameters. Slices returned earlier become invalid.
func (c *Chunker) Reset(r io.Reader) {
	c.r = r
	c.start, c.end = 0, 0
	c.eof = false
	c.err = nil
}

// Continue makes c read the next stream from r, as Reset does, but after
// the bytes of the streams before, where there is room: slices returned
// earlier stay valid until WillRefill says otherwise, so a caller can start
// the next stream while the chunks of the last are still in use. What was
// buffered of the last stream and not returned is dropped.
func (c *Chunker) Continue(r io.Reader) {
	c.r = r
	c.start = c.end
	c.eof = false
	c.err = nil
}

// Next returns the next chunk of the stream, or io.EOF after the last one
// (an empty stream has no chunks). The slice points into c's buffer and is
// valid until the next call of Reset or of Next that refills the buffer
// (see WillRefill, and Continue); copy it to keep it. A
// read error other than io.EOF is returned wrapped (check it with
// errors.Is) and from then on by every call; chunks buffered before the
// error are not returned, as their boundaries could not be determined.
func (c *Chunker) Next() ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.end-c.start < c.p.Max && !c.eof {
		if err := c.fill(); err != nil {
			c.err = fmt.Errorf("chunker: read: %w", err)
			return nil, c.err
		}
	}
	if c.start == c.end {
		c.err = io.EOF
		return nil, c.err
	}
	n := Cut(c.buf[c.start:c.end], c.g, c.p)
	chunk := c.buf[c.start : c.start+n : c.start+n]
	c.start += n
	return chunk, nil
}

// WillRefill reports whether the next call of Next will move the buffered
// bytes to the front of the buffer and read after them, overwriting every
// chunk returned so far. Until then those chunks stay valid (Next reads
// more only into the room after them), so a caller can hand them to other
// goroutines without a copy and wait for them only when WillRefill says
// so.
func (c *Chunker) WillRefill() bool {
	return c.err == nil && c.end-c.start < c.p.Max && !c.eof && c.start+c.p.Max > len(c.buf)
}

// fill reads until at least Max bytes are buffered or the stream ends,
// first moving the buffered bytes to the front when there is no room for
// that after them (see WillRefill). It reads at least a quarter of Max at
// a time where the buffer has room: a move happens once per about Max
// bytes, and what a caller waits for before it (every chunk returned so
// far) and through it (the move and one read of about a chunk) stays
// short, so that readers of the chunks are not left idle; a source with
// slow round trips (SFTP) still gets large reads. It returns a read error
// other than io.EOF.
func (c *Chunker) fill() error {
	if c.start+c.p.Max > len(c.buf) {
		c.end = copy(c.buf, c.buf[c.start:c.end])
		c.start = 0
	}
	want := c.start + c.p.Max
	limit := min(len(c.buf), max(want, c.end+c.p.Max/4))
	empty := 0
	for c.end < want {
		n, err := c.r.Read(c.buf[c.end:limit])
		c.end += n
		switch {
		case errors.Is(err, io.EOF):
			c.eof = true
			return nil
		case err != nil:
			return err
		case n > 0:
			empty = 0
		default:
			empty++
			if empty >= maxEmptyReads {
				return io.ErrNoProgress
			}
		}
	}
	return nil
}
