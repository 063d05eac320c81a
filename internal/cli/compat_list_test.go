package cli

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// compatListResult, compatSnapshotEntry and compatSourceInfo are
// Cloudstic's ListResult, SnapshotEntry and the part of its Snapshot a
// script reads, without JSON tags on the outer two, as Cloudstic's are.
type compatListResult struct {
	Snapshots []compatSnapshotEntry
}

type compatSnapshotEntry struct {
	Ref  string
	Snap struct {
		Created string            `json:"created"`
		Root    string            `json:"root"`
		Seq     int               `json:"seq"`
		Source  *compatSourceInfo `json:"source,omitempty"`
		Tags    []string          `json:"tags,omitempty"`
	}
	Created time.Time
}

type compatSourceInfo struct {
	Type    string `json:"type"`
	Account string `json:"account,omitempty"`
	Path    string `json:"path,omitempty"`
}

// TestCompatList: list prints Cloudstic's layout, "N snapshots" and then a
// table whose rows start with "|": SEQ, CREATED, SNAPSHOT HASH (the full
// id, which every command takes), SOURCE (the type), ACCOUNT (the host),
// PATH, TAGS (comma-separated), then our columns; list -json is
// Cloudstic's {"Snapshots": [{"Ref", "Snap", "Created"}]} with our fields.
func TestCompatList(t *testing.T) {
	dir := t.TempDir()
	src, ids := compatRepo(t, dir, 2, []string{"daily"}, []string{"daily", "weekly"})
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	out := uxOK(t, dir, "list").stdout
	if first, _, _ := strings.Cut(out, "\n"); first != "2 snapshots" {
		t.Errorf("first line %q, want %q", first, "2 snapshots")
	}
	if !strings.Contains(out, "| SEQ | CREATED ") || !strings.Contains(out, "| SNAPSHOT HASH ") {
		t.Errorf("no Cloudstic header row:\n%s", out)
	}
	rows := compatRows(t, out)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(rows), out)
	}
	wantTags := [][]string{{"daily"}, {"daily", "weekly"}}
	for i, r := range rows {
		if r.Seq != i+1 || r.Hash != ids[i] || r.Source != "local" || r.Account != host || r.Path != src ||
			!slices.Equal(r.Tags, wantTags[i]) || r.Created == "" {
			t.Errorf("row %d = %+v, want seq %d, hash %s, local, %s, %s, tags %v", i, r, i+1, ids[i], host, src, wantTags[i])
		}
		if len(r.Extra) != 1 || r.Extra[0] != "local:"+src {
			t.Errorf("row %d: our columns %v, want the source URI", i, r.Extra)
		}
	}
	// The hash a script reads from a row is a snapshot reference.
	uxOK(t, dir, "ls", rows[0].Hash)

	// list -json decodes into Cloudstic's result types (Go's field names,
	// no tags, as Cloudstic prints them).
	var doc compatListResult
	uxJSON(t, uxOK(t, dir, "list", "-json").stdout, &doc)
	if len(doc.Snapshots) != 2 {
		t.Fatalf("list -json: %d snapshots, want 2", len(doc.Snapshots))
	}
	for i, e := range doc.Snapshots {
		want := compatSnapshotEntry{Ref: "snapshot/" + ids[i], Created: e.Created}
		want.Snap.Seq, want.Snap.Created, want.Snap.Root, want.Snap.Tags = i+1, rows[i].Created, e.Snap.Root, wantTags[i]
		want.Snap.Source = &compatSourceInfo{Type: "local", Account: host, Path: src}
		if !reflect.DeepEqual(e, want) || e.Created.IsZero() || !strings.HasPrefix(e.Snap.Root, "tree/") {
			t.Errorf("list -json snapshot %d = %+v (source %+v), want %+v (source %+v)", i, e, e.Snap.Source, want, want.Snap.Source)
		}
		// Its Ref and Root are what cat takes.
		uxOK(t, dir, "cat", e.Ref, e.Snap.Root)
	}

	// An empty repository: the count, and a table with no rows.
	empty := t.TempDir()
	uxOK(t, empty, "init", "-no-encryption")
	out = uxOK(t, empty, "list").stdout
	if !strings.HasPrefix(out, "0 snapshots\n") || len(compatRows(t, out)) != 0 {
		t.Errorf("empty list:\n%s", out)
	}
}
