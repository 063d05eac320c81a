package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The compat_*_test.go files read our output the way a Cloudstic user's
// script reads Cloudstic's (its public e2e harness shows how: rows of a
// table by their leading "|", counts by the words before or after them),
// so a change that breaks such a script breaks a test.

// compatRow is one snapshot row of a table, in Cloudstic's columns.
type compatRow struct {
	Seq                                  int
	Created, Hash, Source, Account, Path string
	Tags                                 []string
	Extra                                []string // our columns after TAGS
}

// compatRows parses every snapshot row of the tables in out: lines that
// start with "|", split on "|", the header and rules skipped.
func compatRows(t *testing.T, out string) []compatRow {
	t.Helper()
	var rows []compatRow
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) < 9 {
			t.Fatalf("a row has %d columns, want at least 7:\n%s", len(cols)-2, line)
		}
		seq := strings.TrimSpace(cols[1])
		if seq == "SEQ" {
			continue
		}
		n, err := strconv.Atoi(seq)
		if err != nil {
			t.Fatalf("SEQ %q is not a number:\n%s", seq, out)
		}
		r := compatRow{Seq: n, Created: strings.TrimSpace(cols[2]), Hash: strings.TrimSpace(cols[3]),
			Source: strings.TrimSpace(cols[4]), Account: strings.TrimSpace(cols[5]), Path: strings.TrimSpace(cols[6])}
		if tags := strings.TrimSpace(cols[7]); tags != "" {
			for _, tag := range strings.Split(tags, ",") {
				r.Tags = append(r.Tags, strings.TrimSpace(tag))
			}
		}
		for _, c := range cols[8 : len(cols)-1] {
			r.Extra = append(r.Extra, strings.TrimSpace(c))
		}
		rows = append(rows, r)
	}
	return rows
}

// compatLeadingInt is the number a line starts with, as a script reads
// "2 snapshots have been removed".
func compatLeadingInt(t *testing.T, out, phrase string) int {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, phrase) {
			continue
		}
		f := strings.Fields(line)
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %q does not start with a count", line)
		}
		return n
	}
	t.Fatalf("no line holds %q:\n%s", phrase, out)
	return 0
}

// compatField is the value after "label" on its line, trimmed, as a script
// reads "  Objects deleted:  3".
func compatField(t *testing.T, out, label string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if _, v, ok := strings.Cut(line, label); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no line holds %q:\n%s", label, out)
	return ""
}

// compatRepo makes an unencrypted repository in dir with n snapshots of
// one source (tags per snapshot from tags, if given) and returns the
// source and the snapshot ids, oldest first.
func compatRepo(t *testing.T, dir string, n int, tags ...[]string) (string, []string) {
	t.Helper()
	src := filepath.Join(dir, "src")
	uxOK(t, dir, "init", "-no-encryption")
	var ids []string
	for i := range n {
		uxWrite(t, filepath.Join(src, "f"), strconv.Itoa(i))
		args := []string{"backup", "-source", "local:" + src, "-json"}
		if i < len(tags) {
			for _, tag := range tags[i] {
				args = append(args, "-tag", tag)
			}
		}
		var b struct {
			SnapshotID string `json:"snapshot_id"`
		}
		uxJSON(t, uxOK(t, dir, args...).stdout, &b)
		ids = append(ids, b.SnapshotID)
	}
	return src, ids
}
