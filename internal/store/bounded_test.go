package store

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless is an object without end, as /dev/zero is.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestReadLimited: an object of at most max bytes is read whole, a larger
// one is ErrTooLarge without a read when its size is known and after at
// most max+1 bytes when not (an endless one included), and content that
// disagrees with the size given is an error.
func TestReadLimited(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100) // 1000 bytes
	cases := []struct {
		name      string
		r         io.Reader
		size, max int64
		want      []byte
		wantErr   error // nil: want must come back
		anyErr    bool  // some error other than ErrTooLarge
		maxRead   int64 // the most bytes the read may take from r
	}{
		{"known size, at the bound", bytes.NewReader(data), 1000, 1000, data, nil, false, 1000},
		{"known size, under the bound", bytes.NewReader(data), 1000, 5000, data, nil, false, 1000},
		{"known size, over the bound", bytes.NewReader(data), 1000, 999, nil, ErrTooLarge, false, 0},
		{"unknown size, at the bound", bytes.NewReader(data), -1, 1000, data, nil, false, 1000},
		{"unknown size, over the bound", bytes.NewReader(data), -1, 999, nil, ErrTooLarge, false, 1000},
		{"unknown size, endless", endless{}, -1, 4096, nil, ErrTooLarge, false, 4097},
		{"size says less than there is", endless{}, 10, 4096, nil, nil, true, 11},
		{"size says more than there is", bytes.NewReader(data), 2000, 4096, nil, io.ErrUnexpectedEOF, true, 1000},
		{"empty", bytes.NewReader(nil), 0, 0, []byte{}, nil, false, 0},
		{"negative bound", bytes.NewReader(data), -1, -1, nil, nil, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &countingReader{r: tc.r}
			got, err := ReadLimited(r, "k", tc.size, tc.max)
			switch {
			case tc.anyErr:
				if err == nil || errors.Is(err, ErrTooLarge) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Errorf("got %v, want an error (%v) other than ErrTooLarge", err, tc.wantErr)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) || got != nil {
					t.Errorf("got %d bytes, %v; want %v", len(got), err, tc.wantErr)
				}
			case err != nil || !bytes.Equal(got, tc.want):
				t.Errorf("got %d bytes, %v; want %d bytes", len(got), err, len(tc.want))
			}
			if r.n > tc.maxRead {
				t.Errorf("read %d bytes, more than %d", r.n, tc.maxRead)
			}
		})
	}
}
