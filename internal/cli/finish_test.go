package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// TestFinishPrintsOneLine maps errors to exit codes and checks that every
// error, joined ones included, is printed as one line naming the command.
func TestFinishPrintsOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, ExitOK, ""},
		{"plain", errors.New("disk full"), ExitError, "cloudstic restore: disk full\n"},
		{"joined", errors.Join(errors.New("first"), errors.New("second")), ExitError, "cloudstic restore: first; second\n"},
		{"wrapped join", fmt.Errorf("pruning: %w", errors.Join(errors.New("a"), errors.New("b"))), ExitError, "cloudstic restore: pruning: a; b\n"},
		{"usage", usageErr("unknown flag -x"), ExitUsage, "cloudstic restore: unknown flag -x\n"},
		{"reported", fmt.Errorf("%w: 2 errors found", errReported), ExitError, "cloudstic restore: failed: 2 errors found\n"},
		{"partial", errPartial, ExitPartial, ""},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), ExitInterrupted, "cloudstic restore: interrupted; the lock was released and nothing already stored was changed\n"},
		{"canceled, lock left", fmt.Errorf("x: %w (and %w: store down)", context.Canceled, operation.ErrLockLeft), ExitInterrupted,
			"cloudstic restore: interrupted; nothing already stored was changed, but our lock could not be removed; it expires by itself within a minute\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			a := &app{io: IO{Stderr: &stderr}, cmd: &command{name: "restore"}}
			if code := a.finish(tc.err); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}
