package restore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// TestRestoreInterrupted runs restores whose context is already cancelled
// (Ctrl-C): they fail with the cancellation, report no file as damaged
// (an interruption is not damage, and would send the user to run check),
// and leave no zip file behind (one cut short still opens and looks whole).
func TestRestoreInterrupted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, format := range []string{restore.FormatDir, restore.FormatZip} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			r, root := f.open(t)
			out := filepath.Join(t.TempDir(), "out")
			if format == restore.FormatZip {
				out += ".zip"
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var warnings []string
			warnf := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
			res, err := restore.Run(ctx, r, checktest.Lease(t, f.st), root, restore.Options{Output: out, Format: format, Warnf: warnf})
			if !errors.Is(err, context.Canceled) || errors.Is(err, restore.ErrDamaged) {
				t.Fatalf("restore: %v, want the cancellation alone", err)
			}
			if len(warnings) > 0 || (res != nil && len(res.Damaged) > 0) {
				t.Errorf("interrupted restore reported damage: %q, %+v", warnings, res)
			}
			if format == restore.FormatZip {
				if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("interrupted zip restore left %s (%v)", out, err)
				}
			}
		})
	}
}
