package backup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
)

// failingReader gives data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(b []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(b, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestStream: a stream becomes a snapshot of one file; a read error fails
// the run with that error and writes no snapshot; bad names are refused.
func TestStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := checktest.NewRepo(t, t.TempDir())
	r := checktest.Open(t, st)
	if _, err := r.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 300_000) // several chunks
	errBroken := errors.New("pipe broke")
	for _, tt := range []struct {
		name    string
		in      io.Reader
		file    string
		wantErr error
	}{
		{"ok", bytes.NewReader(data), "db.sql", nil},
		{"empty", bytes.NewReader(nil), "empty", nil},
		{"read error", &failingReader{data: data[:100_000], err: errBroken}, "db.sql", errBroken},
		{"slash", bytes.NewReader(data), "a/b", backup.ErrStdinName},
		{"dot dot", bytes.NewReader(data), "..", backup.ErrStdinName},
		{"no name", bytes.NewReader(data), "", backup.ErrStdinName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := backup.Run(ctx, checktest.Writer(t, st, r), nil, backup.Options{Hostname: "h", Workers: 2,
				Stream: &backup.Stream{Reader: tt.in, Filename: tt.file}})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if res != nil {
					t.Errorf("failed run returned a result %+v", res)
				}
				return
			}
			if res.ID.IsZero() || res.Snapshot.Source != backup.StdinSourcePrefix+tt.file {
				t.Fatalf("snapshot %v source %q", res.ID, res.Snapshot.Source)
			}
			tr, err := r.LoadTree(ctx, res.Snapshot.Tree)
			if err != nil || len(tr.Nodes) != 1 || tr.Nodes[0].Name != tt.file {
				t.Fatalf("tree %+v (%v), want one file %q", tr, err, tt.file)
			}
		})
	}
	snaps, _, err := r.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 {
		t.Errorf("%d snapshots, want 2 (the failed runs wrote none)", len(snaps))
	}
}
