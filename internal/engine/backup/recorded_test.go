package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/test/winetest"
)

// TestRecordedIsWhatRunRecords: for a source given relative, with a
// trailing slash, through a symbolic link or as several paths, Recorded
// names the origin (source, host, path, paths, tags) the backup then
// records, so a profile's retention can find the group of its snapshots
// without running one.
func TestRecordedIsWhatRunRecords(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	mkdirAll(t, filepath.Join(data, "sub"))
	write(t, filepath.Join(data, "sub", "f"), "x")
	linkErr := os.Symlink(data, filepath.Join(base, "link"))
	t.Chdir(base)
	st := checktest.NewRepo(t, t.TempDir())
	for _, tc := range []struct {
		name string
		opts backup.Options
	}{
		{"relative", backup.Options{Path: "data"}},
		{"dot relative", backup.Options{Path: "./data/sub/.."}},
		{"trailing slash", backup.Options{Path: data + "/"}},
		{"absolute, tags, host", backup.Options{Path: data, Tags: []string{"b", "a"}, Hostname: "elsewhere"}},
		{"through a link", backup.Options{Path: "link"}},
		{"several paths", backup.Options{Paths: []string{"data/sub", data + "/sub/f"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.opts.Path == "link":
				winetest.SkipWithoutSymlinks(t)
				if linkErr != nil {
					t.Fatal(linkErr)
				}
			case tc.opts.Paths != nil && runtime.GOOS == "windows":
				t.Skip("several roots are refused on Windows (TestSeveralRootsRefusedOnWindows)")
			}
			ctx := context.Background()
			got, err := backup.Recorded(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			opts := tc.opts
			opts.DryRun = true
			res, err := backup.DryRun(ctx, r, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Snapshot
			want := &snapshot.Snapshot{Source: s.Source, Hostname: s.Hostname, Path: s.Path, Paths: s.Paths, Tags: s.Tags}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Recorded = %+v\nRun records %+v", got, want)
			}
			if got.Source == "" || got.Hostname == "" && tc.opts.Hostname != "" {
				t.Errorf("Recorded left the source or host empty: %+v", got)
			}
		})
	}
	if _, err := backup.Recorded(context.Background(), backup.Options{Path: filepath.Join(base, "none")}); !errors.Is(err, backup.ErrSource) {
		t.Errorf("a missing source: %v, want ErrSource", err)
	}
	if _, err := backup.Recorded(context.Background(), backup.Options{Stream: &backup.Stream{Filename: "x"}}); !errors.Is(err, backup.ErrRecordedStream) {
		t.Errorf("a stream: %v, want ErrRecordedStream", err)
	}
}
