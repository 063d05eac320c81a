//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// findResult is find -json (Cloudstic's FindResult, with our path and
// source_uri): the files, each with its versions and the snapshots
// holding each.
type findResult struct {
	Matches []struct {
		SourceURI string `json:"source_uri"`
		Path      string `json:"path"`
		Versions  []struct {
			Size      int64 `json:"size"`
			Mtime     int64 `json:"mtime"`
			Snapshots []struct {
				Ref string `json:"ref"`
			} `json:"snapshots"`
		} `json:"versions"`
	} `json:"matches"`
}

// TestFind searches two snapshots of a real tree on every kind of store:
// patterns, snapshot selection, path prefix, times and sizes, text and
// -json output, and the usage errors.
func TestFind(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}, {"sftp", sftpStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := smallTree(t, 7)
			first := backupJSON(t, r, src).SnapshotID
			if err := os.WriteFile(filepath.Join(src, "a", "added.txt"), []byte("added later\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			second := backupJSON(t, r, src).SnapshotID

			paths := func(args ...string) []string {
				t.Helper()
				var res findResult
				decodeJSON(t, mustRun(t, r.with("find", append(args, "-json")...)...), &res)
				var out []string
				for _, f := range res.Matches {
					if f.SourceURI != "local:"+src {
						t.Errorf("%s: source %q, want local:%s", f.Path, f.SourceURI, src)
					}
					for _, v := range f.Versions {
						for _, h := range v.Snapshots {
							id := "1"
							if h.Ref == "snapshot/"+second {
								id = "2"
							}
							out = append(out, id+" "+f.Path)
						}
					}
				}
				slices.Sort(out)
				return out
			}
			tests := []struct {
				name string
				args []string
				want []string
			}{
				{"name", []string{"deep.txt"}, []string{"1 a/b/c/d/deep.txt", "2 a/b/c/d/deep.txt"}},
				{"glob in one snapshot", []string{"*.txt", "-snapshot", second[:8], "-path-prefix", src + "/a"},
					[]string{"2 a/added.txt", "2 a/b/c/d/deep.txt"}},
				{"only the second has it", []string{"added.txt"}, []string{"2 a/added.txt"}},
				{"prefix from the snapshot root", []string{"-path-prefix", "/a/b/c", "-snapshot", first}, []string{"1 a/b/c", "1 a/b/c/d", "1 a/b/c/d/deep.txt"}},
				{"ignore case", []string{"-i", "DEEP.*", "-snapshot", first}, []string{"1 a/b/c/d/deep.txt"}},
				{"size", []string{"-size", "+4095", "-size", "-5000", "-snapshot", "latest"}, []string{"2 f4096"}},
				{"older than the tree", []string{"-older", "2001-01-01"}, nil},
				{"newer than the tree", []string{"-newer", "1d"}, []string{"2 a", "2 a/added.txt"}},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					if got := paths(tc.args...); !slices.Equal(got, tc.want) {
						t.Errorf("find %q:\ngot  %q\nwant %q", tc.args, got, tc.want)
					}
				})
			}
			out := mustRun(t, r.with("find", "deep.txt", "-snapshot", first)...).stdout
			// One file, in one snapshot: its path as ls prints it, then the snapshot.
			if !strings.HasPrefix(out, "a/b/c/d/deep.txt  (local:") || !strings.Contains(out, "\n  "+first[:8]) || strings.Count(out, "\n") != 2 {
				t.Errorf("find text output:\n%s", out)
			}
			wantOneLineError(t, run(t, r.with("find", "[x")...), "[x")
			wantOneLineError(t, run(t, r.with("find", "-size", "+10Q")...), "-size", "+10Q")
			wantOneLineError(t, run(t, r.with("find", "-newer", "yesterday")...), "-newer", "yesterday")
			wantOneLineError(t, run(t, r.with("find", "x", "-snapshot", "ffffffff")...), "ffffffff")
		})
	}
}
