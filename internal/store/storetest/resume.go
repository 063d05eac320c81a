package storetest

import (
	"bytes"
	"errors"
	"testing"
)

// CheckResumed checks what a stream gave after a fault in its connection:
// got, every byte read (before and after the fault), must be a prefix of
// want, and the read after the fault must have ended with err wrapping
// wantErr, or, when wantErr is nil, without error and with all of want.
func CheckResumed(t testing.TB, got, want []byte, err, wantErr error) {
	t.Helper()
	if !bytes.Equal(got, want[:min(len(got), len(want))]) {
		t.Fatalf("the stream returned wrong bytes (%d read)", len(got))
	}
	switch {
	case wantErr == nil && err != nil:
		t.Fatalf("read after the fault: %v", err)
	case wantErr == nil && len(got) != len(want):
		t.Fatalf("read %d bytes, want %d", len(got), len(want))
	case wantErr != nil && !errors.Is(err, wantErr):
		t.Fatalf("read after the fault: %v, want %v", err, wantErr)
	}
}
