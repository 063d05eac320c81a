package find_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/find"
	"github.com/cloudstic/cloudstic/internal/engine/treewalk/walktest"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

func write(t *testing.T, path string, size int, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestFind runs searches over two real snapshots and checks what each
// returns, and that none reads a pack holding file data.
func TestFind(t *testing.T) {
	ctx := context.Background()
	r := walktest.New(t)
	src := t.TempDir()
	day := func(d int) time.Time { return time.Date(2026, 1, d, 12, 0, 0, 0, time.UTC) }
	write(t, filepath.Join(src, "docs", "report.pdf"), 5000, day(1))
	write(t, filepath.Join(src, "docs", "notes.TXT"), 10, day(2))
	write(t, filepath.Join(src, "photos", "2025", "beach.jpg"), 300000, day(3))
	write(t, filepath.Join(src, "readme.txt"), 100, day(4))
	s1 := r.Backup(t, src, "h", day(10))
	write(t, filepath.Join(src, "docs", "new.txt"), 1, day(5))
	s2 := r.Backup(t, src, "h", day(11))
	snaps := []snapshot.WithID{s1, s2}

	tests := []struct {
		name string
		opts find.Options
		want []string // snapshot 1 or 2 and path
		// entries is RunStats' count: 7 entries in s1, 8 in s2, all
		// looked at unless a prefix limits the walk.
		entries int
	}{
		{"name glob", find.Options{Patterns: []string{"*.txt"}}, []string{"1 /readme.txt", "2 /docs/new.txt", "2 /readme.txt"}, 15},
		{"ignore case", find.Options{Patterns: []string{"*.txt"}, IgnoreCase: true},
			[]string{"1 /docs/notes.TXT", "1 /readme.txt", "2 /docs/new.txt", "2 /docs/notes.TXT", "2 /readme.txt"}, 15},
		{"path glob", find.Options{Patterns: []string{"/photos/*/*"}}, []string{"1 /photos/2025/beach.jpg", "2 /photos/2025/beach.jpg"}, 15},
		{"several patterns", find.Options{Patterns: []string{"report.*", "beach.jpg"}},
			[]string{"1 /docs/report.pdf", "1 /photos/2025/beach.jpg", "2 /docs/report.pdf", "2 /photos/2025/beach.jpg"}, 15},
		{"path prefix", find.Options{PathPrefix: "/docs/"}, []string{"1 /docs", "1 /docs/notes.TXT", "1 /docs/report.pdf",
			"2 /docs", "2 /docs/new.txt", "2 /docs/notes.TXT", "2 /docs/report.pdf"}, 7},
		{"deep prefix", find.Options{PathPrefix: "photos/2025", Patterns: []string{"*"}}, []string{"1 /photos/2025", "1 /photos/2025/beach.jpg",
			"2 /photos/2025", "2 /photos/2025/beach.jpg"}, 4},
		{"prefix not a dir name prefix", find.Options{PathPrefix: "/doc"}, nil, 0},
		{"newer", find.Options{Patterns: []string{"*.*"}, Newer: day(3).Add(time.Second)}, []string{"1 /readme.txt", "2 /docs/new.txt", "2 /readme.txt"}, 15},
		{"older", find.Options{Patterns: []string{"*.*"}, Older: day(2)}, []string{"1 /docs/report.pdf", "2 /docs/report.pdf"}, 15},
		{"min size", find.Options{MinSize: 5000}, []string{"1 /docs/report.pdf", "1 /photos/2025/beach.jpg", "2 /docs/report.pdf", "2 /photos/2025/beach.jpg"}, 15},
		{"max size", find.Options{MaxSize: 10, HasMaxSize: true}, []string{"1 /docs/notes.TXT", "2 /docs/new.txt", "2 /docs/notes.TXT"}, 15},
		{"one snapshot", find.Options{Patterns: []string{"new.txt"}}, []string{"2 /docs/new.txt"}, 15},
		{"no match", find.Options{Patterns: []string{"*.doc"}}, nil, 15},
	}
	dataPacks := walktest.DataPacks(t, r.Repository)
	if len(dataPacks) == 0 {
		t.Fatal("the backup wrote no data pack")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r.Rec.Reset()
			var got []string
			stats, err := find.RunStats(ctx, r.Repository, snaps, tc.opts, func(m find.Match) error {
				n := "1"
				if m.Snapshot.ID == s2.ID {
					n = "2"
				}
				got = append(got, n+" "+m.Path)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
			if stats.Entries != tc.entries {
				t.Errorf("%d entries scanned, want %d", stats.Entries, tc.entries)
			}
			reads := r.Rec.PackReads()
			if len(reads) == 0 {
				t.Error("no pack was read at all: the counter does not see tree reads")
			}
			for p, n := range reads {
				if dataPacks[p] {
					t.Errorf("find read data pack %s %d times", p.Short(), n)
				}
			}
		})
	}
	if err := find.Run(ctx, r.Repository, snaps, find.Options{Patterns: []string{"[x"}}, nil); err == nil {
		t.Error("a bad pattern was accepted")
	}
}
