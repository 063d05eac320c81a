package cmdoutput

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	for _, tt := range []struct {
		name    string
		argv    []string
		out     string
		wantErr error  // nil: io.ReadAll succeeds
		msg     string // in the error
	}{
		{"success", []string{"sh", "-c", "printf hello"}, "hello", nil, ""},
		{"exit status", []string{"sh", "-c", "printf part; exit 3"}, "part", ErrFailed, "exited with status 3"},
		{"signal", []string{"sh", "-c", "kill -9 $$"}, "", ErrFailed, "killed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Start(context.Background(), tt.argv, nil, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if string(got) != tt.out {
				t.Errorf("output %q, want %q", got, tt.out)
			}
			if !errors.Is(err, tt.wantErr) || (err != nil && !strings.Contains(err.Error(), tt.msg)) {
				t.Errorf("ReadAll error %v, want %v (%q)", err, tt.wantErr, tt.msg)
			}
			if cerr := r.Close(); !errors.Is(cerr, tt.wantErr) {
				t.Errorf("Close: %v, want %v", cerr, tt.wantErr)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(context.Background(), nil, nil, io.Discard); err == nil {
		t.Error("Start with no command succeeded")
	}
	if _, err := Start(context.Background(), []string{"/nonexistent/cmd"}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "/nonexistent/cmd") {
		t.Errorf("Start of a missing program: %v", err)
	}
}

// TestCloseKills: Close ends a command that still runs, and so does the
// end of the context.
func TestCloseKills(t *testing.T) {
	r, err := Start(context.Background(), []string{"sleep", "1000"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); !errors.Is(err, ErrFailed) {
		t.Errorf("Close of a running command: %v, want ErrFailed (killed)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err = Start(ctx, []string{"sleep", "1000"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Errorf("reading a cancelled command: %v, want context.Canceled", err)
	}
}
