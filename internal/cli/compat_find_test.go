package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// compatFindResult, compatFindQuery, compatFileMatch, compatFileVersion
// and compatSnapshotRef are Cloudstic's FindResult, FindQuery (the fields
// of the flags both tools have), FileMatch, FileVersion and SnapshotRef,
// with their JSON tags.
type compatFindResult struct {
	Query             compatFindQuery   `json:"query"`
	SnapshotsSearched int               `json:"snapshots_searched"`
	EntriesScanned    int               `json:"entries_scanned"`
	MetaFetched       int               `json:"meta_fetched"`
	Matches           []compatFileMatch `json:"matches"`
	Truncated         bool              `json:"truncated"`
	Warnings          []string          `json:"warnings,omitempty"`
	GroupedBy         string            `json:"grouped_by"`
	Elapsed           string            `json:"elapsed,omitempty"`
}

type compatFindQuery struct {
	Name       string `json:"name,omitempty"`
	Path       string `json:"path,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Size       *struct {
		Op    string `json:"op"`
		Bytes int64  `json:"bytes"`
	} `json:"size,omitempty"`
	Newer      string   `json:"newer,omitempty"`
	Older      string   `json:"older,omitempty"`
	Snapshots  []string `json:"snapshots,omitempty"`
	MaxResults int      `json:"max_results,omitempty"`
}

type compatFileMatch struct {
	FileID      string              `json:"file_id,omitempty"`
	ContentHash string              `json:"content_hash,omitempty"`
	Source      *compatSourceInfo   `json:"source,omitempty"`
	Type        string              `json:"type,omitempty"`
	Versions    []compatFileVersion `json:"versions"`
}

type compatFileVersion struct {
	Ref         string              `json:"ref"`
	FileID      string              `json:"file_id"`
	Name        string              `json:"name"`
	Paths       []string            `json:"paths"`
	ContentHash string              `json:"content_hash,omitempty"`
	Type        string              `json:"type,omitempty"`
	Size        int64               `json:"size"`
	Mtime       int64               `json:"mtime"`
	Mode        uint32              `json:"mode,omitempty"`
	Snapshots   []compatSnapshotRef `json:"snapshots"`
	FirstSeen   string              `json:"first_seen"`
	LastSeen    string              `json:"last_seen"`
}

type compatSnapshotRef struct {
	Ref     string `json:"ref"`
	Seq     int    `json:"seq"`
	Created string `json:"created"`
}

// TestCompatFind: find -json decodes into Cloudstic's FindResult: one
// match per file, its versions newest first, each with the snapshots
// holding it (newest first, with list's seq and created); -max-results
// stops at N files and says truncated.
func TestCompatFind(t *testing.T) {
	dir := t.TempDir()
	uxWrite(t, filepath.Join(dir, "src", "keep"), "same")
	src, ids := compatRepo(t, dir, 2)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	var created []string
	var list compatListResult
	uxJSON(t, uxOK(t, dir, "list", "-json").stdout, &list)
	for _, e := range list.Snapshots {
		created = append(created, e.Snap.Created)
	}
	snap := func(i int) compatSnapshotRef {
		return compatSnapshotRef{Ref: "snapshot/" + ids[i], Seq: i + 1, Created: created[i]}
	}
	source := &compatSourceInfo{Type: "local", Account: host, Path: src}
	// version is a file's version held by the snapshots numbered in
	// (newest first), as far as the test knows it.
	version := func(name string, size int64, in ...int) compatFileVersion {
		v := compatFileVersion{FileID: name, Name: name, Paths: []string{name}, Type: "file", Size: size,
			FirstSeen: created[in[len(in)-1]], LastSeen: created[in[0]]}
		for _, i := range in {
			v.Snapshots = append(v.Snapshots, snap(i))
		}
		return v
	}
	tests := []struct {
		name      string
		args      []string
		query     compatFindQuery
		matches   []compatFileMatch
		truncated bool
	}{
		{"unchanged in both, changed", []string{}, compatFindQuery{MaxResults: 1000}, []compatFileMatch{
			{FileID: "f", Source: source, Type: "file", Versions: []compatFileVersion{version("f", 1, 1), version("f", 1, 0)}},
			{FileID: "keep", Source: source, Type: "file", Versions: []compatFileVersion{version("keep", 4, 1, 0)}},
		}, false},
		{"no match", []string{"nothing*"}, compatFindQuery{Name: "nothing*", MaxResults: 1000}, []compatFileMatch{}, false},
		{"one snapshot, a path", []string{"-snapshot", "latest", "/k*"},
			compatFindQuery{Path: "/k*", Snapshots: []string{"latest"}, MaxResults: 1000}, []compatFileMatch{
				{FileID: "keep", Source: source, Type: "file", Versions: []compatFileVersion{version("keep", 4, 1)}},
			}, false},
		{"truncated", []string{"-max-results", "1", "-size", "+0"}, compatFindQuery{MaxResults: 1, Size: &struct {
			Op    string `json:"op"`
			Bytes int64  `json:"bytes"`
		}{"+", 1}}, []compatFileMatch{
			// The first file found is kept, with all its versions.
			{FileID: "f", Source: source, Type: "file", Versions: []compatFileVersion{version("f", 1, 1), version("f", 1, 0)}},
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res compatFindResult
			uxJSON(t, uxOK(t, dir, append([]string{"find", "-json"}, tc.args...)...).stdout, &res)
			searched := 2
			if len(tc.query.Snapshots) > 0 {
				searched = 1
			}
			if res.SnapshotsSearched != searched || res.GroupedBy != "file" || res.Truncated != tc.truncated ||
				res.EntriesScanned == 0 || res.Elapsed == "" || !reflect.DeepEqual(res.Query, tc.query) {
				t.Errorf("result %+v, want %d snapshots searched, grouped by file, truncated %v, query %+v",
					res, searched, tc.truncated, tc.query)
			}
			if res.Matches == nil || len(res.Matches) != len(tc.matches) {
				t.Fatalf("matches %+v, want %+v", res.Matches, tc.matches)
			}
			for i, m := range res.Matches {
				for j := range m.Versions {
					v := &m.Versions[j]
					// Ref, Mtime and Mode are the entry's: checked for shape only.
					if len(v.Ref) != len("node/")+64 || v.Mtime == 0 || v.Mode != 0o644 {
						t.Errorf("%s version %d: ref %q, mtime %d, mode %o", m.FileID, j, v.Ref, v.Mtime, v.Mode)
					}
					v.Ref, v.Mtime, v.Mode = "", 0, 0
				}
				if !reflect.DeepEqual(m, tc.matches[i]) {
					t.Errorf("match %d:\n got %+v\nwant %+v", i, m, tc.matches[i])
				}
			}
		})
	}
}
