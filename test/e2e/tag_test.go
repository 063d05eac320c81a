//go:build unix

package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tagOut is the -json document of tag.
type tagOut struct {
	DryRun  bool `json:"dry_run"`
	Changes []struct {
		OldID      string   `json:"old_id"`
		NewID      string   `json:"new_id"`
		OldTags    []string `json:"old_tags"`
		NewTags    []string `json:"new_tags"`
		OldDeleted bool     `json:"old_deleted"`
	} `json:"changes"`
	Unchanged int `json:"unchanged"`
}

// catOriginal returns the original field of `cat snapshot sid`.
func catOriginal(t *testing.T, r repoArgs, sid string) string {
	t.Helper()
	var s struct {
		Snapshot struct {
			Original string `json:"original"`
		} `json:"snapshot"`
	}
	res := mustRun(t, r.with("cat", "snapshot", sid)...)
	if err := json.Unmarshal([]byte(res.stdout), &s); err != nil {
		t.Fatalf("cat snapshot: %v\n%s", err, res.stdout)
	}
	return s.Snapshot.Original
}

// tagsByID lists the snapshots as id -> tags.
func tagsByID(t *testing.T, r repoArgs) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, e := range listJSON(t, r) {
		out[e.ID] = e.Tags
	}
	return out
}

// TestTag changes the tags of snapshots of a real tree on the local store
// and the S3 server: by id and by tag filter, -add/-remove/-set, a dry
// run, -json, the usage errors; rewritten snapshots get new ids that
// remember the original, restore byte for byte, and no lock is left.
func TestTag(t *testing.T) {
	t.Parallel()
	for _, kind := range []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			src := smallTree(t, 11)
			first := backupJSON(t, r, src, "-tag", "daily").SnapshotID
			second := backupJSON(t, r, src, "-tag", "daily", "-tag", "keep").SnapshotID
			third := backupJSON(t, r, src).SnapshotID

			// A dry run prints the change and changes nothing.
			out := mustRun(t, r.with("tag", "-add", "monthly", "-tag", "daily", "-dry-run")...).stdout
			if !strings.Contains(out, "would change "+first[:8]+"  [daily] -> [daily, monthly]") ||
				!strings.Contains(out, "2 snapshots would change") {
				t.Errorf("dry run output:\n%s", out)
			}
			before := tagsByID(t, r)
			if len(before) != 3 || !slices.Equal(before[first], []string{"daily"}) {
				t.Fatalf("snapshots after a dry run: %v", before)
			}

			// By id: first gets keep and loses daily; third is already untagged.
			var res tagOut
			decodeJSON(t, mustRun(t, r.with("tag", "-json", "-add", "keep", "-remove", "daily", first[:8])...), &res)
			if len(res.Changes) != 1 || res.Changes[0].OldID != first || len(res.Changes[0].NewID) != 64 ||
				res.Changes[0].NewID == first || !res.Changes[0].OldDeleted || !slices.Equal(res.Changes[0].NewTags, []string{"keep"}) {
				t.Fatalf("tag -json: %+v", res)
			}
			firstNew := res.Changes[0].NewID
			if got := catOriginal(t, r, firstNew); got != first {
				t.Errorf("original of the rewritten snapshot %q, want %q", got, first)
			}
			decodeJSON(t, mustRun(t, r.with("tag", "-json", "-remove", "daily", third)...), &res)
			if len(res.Changes) != 0 || res.Unchanged != 1 {
				t.Errorf("removing an absent tag: %+v", res)
			}

			// By filter, then a second rewrite of the same backup.
			out = mustRun(t, r.with("tag", "-set", "monthly", "-set", "archive", "-tag", "keep")...).stdout
			if !strings.Contains(out, "Changed 2 snapshots") {
				t.Errorf("tag -set output:\n%s", out)
			}
			after := tagsByID(t, r)
			if len(after) != 3 || after[third] == nil {
				t.Fatalf("snapshots after -set: %v", after)
			}
			originals := map[string]bool{}
			for sid, tags := range after {
				if sid == third {
					continue
				}
				if sid == first || sid == second || sid == firstNew || !slices.Equal(tags, []string{"monthly", "archive"}) {
					t.Errorf("snapshot %s tags %q after -set", sid[:8], tags)
				}
				originals[catOriginal(t, r, sid)] = true
				dst := filepath.Join(t.TempDir(), "out")
				mustRun(t, r.with("restore", sid, "-output", dst)...)
				compareTrees(t, src, dst, cmpOpts{})
			}
			if !originals[first] || !originals[second] {
				t.Errorf("originals after two rewrites %v, want %s and %s", originals, first[:8], second[:8])
			}

			// -set "" removes every tag.
			mustRun(t, r.with("tag", "-set", "", "-tag", "archive")...)
			for sid, tags := range tagsByID(t, r) {
				if len(tags) != 0 {
					t.Errorf("snapshot %s still has tags %q", sid[:8], tags)
				}
			}
			mustRun(t, r.with("check")...)
			var locks []any
			if res := mustRun(t, r.with("locks", "-json")...); json.Unmarshal([]byte(res.stdout), &locks) != nil || len(locks) != 0 {
				t.Errorf("locks left: %s", res.stdout)
			}

			for _, tc := range []struct {
				args []string
				subs []string
			}{
				{[]string{"-add", "x"}, []string{"-tag filter"}},
				{[]string{third}, []string{"-add", "-remove", "-set"}},
				{[]string{"-set", "x", "-add", "y", third}, []string{"-set", "cannot be combined"}},
				{[]string{"-add", "", third}, []string{"empty"}},
			} {
				res := run(t, r.with("tag", tc.args...)...)
				wantCode(t, res, 2)
				wantOneLineError(t, res, tc.subs...)
			}
			res2 := run(t, r.with("tag", "-add", "x", "ffffffff")...)
			wantCode(t, res2, 1)
			wantOneLineError(t, res2, "ffffffff")
		})
	}
}
