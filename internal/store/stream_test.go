package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/cloudstic/cloudstic/internal/store"
)

// errFailedResume stands for a stream's failure to continue after a
// dropped connection, whose error also wraps the io.EOF the read met.
var (
	errFailedResume = errors.New("reopening the stream failed")
	errWrapsEOF     = fmt.Errorf("%w after reading: %w", errFailedResume, io.EOF)
)

// TestExactRange: exactly the range's bytes then io.EOF, whatever the
// body's read sizes; a body that ends early is io.ErrUnexpectedEOF, and
// bytes past the range are never read; an error that only wraps io.EOF
// is the body's failure, passed on as it is.
func TestExactRange(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		name    string
		body    io.Reader
		length  int64
		want    string
		wantErr error
	}{
		{"whole body", bytes.NewReader(data), 10, "0123456789", nil},
		{"body longer than the range", bytes.NewReader(data), 4, "0123", nil},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data)), 10, "0123456789", nil},
		{"data and EOF together", iotest.DataErrReader(bytes.NewReader(data)), 10, "0123456789", nil},
		{"body shorter than the range", bytes.NewReader(data), 12, "0123456789", io.ErrUnexpectedEOF},
		{"empty range", bytes.NewReader(data), 0, "", nil},
		{"an error wrapping io.EOF is passed on", io.MultiReader(bytes.NewReader(data[:4]), iotest.ErrReader(errWrapsEOF)), 10, "0123", errFailedResume},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := store.ExactRange(io.NopCloser(tc.body), "k", tc.length)
			got, err := io.ReadAll(r)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if string(got) != tc.want {
				t.Fatalf("read %q, want %q", got, tc.want)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
