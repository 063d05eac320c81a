package sourcetest

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
)

func testDuplicates(t *testing.T, tr DriveTree) {
	src, root := open(t, tr, func(Tree) {
		tr.Write(t, "report.pdf", []byte("one"))
		tr.Duplicate(t, "report.pdf", []byte("two"))
		tr.Write(t, "a:b", []byte("colon"))
	})
	got, _ := Read(t, src, root)
	var dups []string
	for p, v := range got {
		if strings.HasPrefix(p, "report (") && strings.HasSuffix(p, ").pdf") {
			dups = append(dups, v)
		}
	}
	if len(dups) != 2 || got["a:b"] != "colon" {
		t.Fatalf("want two report (ID).pdf and a:b, got %v", keys(got))
	}
	// A second listing names them the same.
	d := src.(source.Drive)
	if _, err := d.Scan(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	again, _ := Read(t, src, root)
	same(t, again, got)
}

// scanSince lists the tree from since and reads it.
func scanSince(t *testing.T, d source.Drive, root source.Root, since *source.Since) (source.ScanResult, map[string]Entry) {
	t.Helper()
	res, err := d.Scan(context.Background(), since)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	got, _ := Read(t, d, root)
	return res, got
}

// Items returns the items of the tree as a snapshot records them, as the
// backup gives them to an incremental scan.
func Items(t *testing.T, d source.Drive, root source.Root) []source.Item {
	t.Helper()
	ctx := context.Background()
	var items []source.Item
	var walk func(dir, dirID string)
	walk = func(dir, dirID string) {
		entries, err := d.ReadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			st := source.StatOf(fi)
			if st == nil || st.Drive == nil {
				t.Fatalf("%s: no drive record in its Stat", e.Name())
			}
			rec := st.Drive
			name := rec.Name
			if name == "" {
				name = e.Name()
			}
			items = append(items, source.Item{ID: rec.ID, ParentID: dirID, Name: name, Dir: e.IsDir(), MIME: rec.MIME,
				Target: rec.Target, Hash: rec.Hash, Size: fi.Size(), MTime: st.MTime})
			if e.Type() == fs.ModeDir {
				walk(filepath.Join(dir, e.Name()), rec.ID)
			}
		}
	}
	walk(root.Real, d.Identity().RootID)
	return items
}

func testChanges(t *testing.T, tr DriveTree) {
	src, root := open(t, tr, func(tr Tree) {
		tr.MkdirAll(t, "docs/old")
		tr.MkdirAll(t, "other")
		tr.Write(t, "docs/keep.txt", []byte("keep"))
		tr.Write(t, "docs/edit.txt", []byte("v1"))
		tr.Write(t, "docs/rename-me.txt", []byte("r"))
		tr.Write(t, "docs/move-me.txt", []byte("m"))
		tr.Write(t, "docs/old/gone.txt", []byte("g"))
	})
	d, ok := src.(source.Drive)
	if !ok || !d.Identity().Changes {
		t.Fatal("a drive tree's source must be a source.Drive with a change feed")
	}
	first, err := d.Scan(context.Background(), nil)
	if err != nil || first.Token == "" {
		t.Fatalf("full scan: token %q, %v", first.Token, err)
	}
	items := Items(t, d, root)
	tr.Write(t, "docs/new.txt", []byte("new"))
	tr.Write(t, "docs/edit.txt", []byte("v2"))
	tr.Rename(t, "docs/rename-me.txt", "docs/renamed.txt")
	tr.Rename(t, "docs/move-me.txt", "other/move-me.txt")
	tr.Remove(t, "docs/old/gone.txt")
	tr.Rename(t, "docs/old", "other/old")
	res, got := scanSince(t, d, root, &source.Since{Token: first.Token, Items: items})
	if res.FullScanReason != nil || res.Changes < 0 || res.Token == "" {
		t.Fatalf("incremental scan: %+v", res)
	}
	want := map[string]Entry{"docs": "dir", "other": "dir", "other/old": "dir", "docs/keep.txt": "keep", "docs/edit.txt": "v2",
		"docs/renamed.txt": "r", "other/move-me.txt": "m", "docs/new.txt": "new"}
	same(t, got, want)
	// The same as a full listing.
	_, full := scanSince(t, d, root, nil)
	same(t, full, want)
}

func testExpired(t *testing.T, tr DriveTree) {
	src, root := open(t, tr, func(tr Tree) { tr.Write(t, "a.txt", []byte("a")) })
	d := src.(source.Drive)
	first, err := d.Scan(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	items := Items(t, d, root)
	tr.Write(t, "b.txt", []byte("b"))
	tr.ExpireTokens(t)
	res, got := scanSince(t, d, root, &source.Since{Token: first.Token, Items: items})
	if !errors.Is(res.FullScanReason, source.ErrTokenExpired) || res.Changes != -1 || res.Token == "" {
		t.Fatalf("scan from an expired token: %+v", res)
	}
	same(t, got, map[string]Entry{"a.txt": "a", "b.txt": "b"})
}

func keys(m map[string]Entry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
