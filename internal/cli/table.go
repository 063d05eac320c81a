package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// table is a boxed text table in the layout Cloudstic prints (and its
// users' scripts read): a `+---+` rule, a `| HEADER |` row, a rule, one
// `| cell |` row per entry, a closing rule. A script finds the rows by
// their leading `|` and splits them on `|`; cells hold no `|` of their
// own (cell replaces it), so the split is exact.
type table struct {
	header []string
	rows   [][]string
	// right marks the columns aligned to the right (numbers).
	right map[int]bool
}

// add appends a row; its cells are made terminal-safe.
func (t *table) add(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = cell(c)
	}
	t.rows = append(t.rows, row)
}

// cell is s as one table cell: terminal-safe, on one line, without the
// `|` that separates cells.
func cell(s string) string {
	s = termtext.Safe(s)
	return strings.NewReplacer("|", "/", "\n", " ", "\r", " ").Replace(s)
}

// render writes the table to w.
func (t *table) render(w io.Writer) {
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i := range widths {
			if i < len(r) {
				widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
			}
		}
	}
	var rule strings.Builder
	rule.WriteString("+")
	for _, n := range widths {
		rule.WriteString(strings.Repeat("-", n+2) + "+")
	}
	line := func(cells []string, header bool) {
		var b strings.Builder
		b.WriteString("|")
		for i, n := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", n-utf8.RuneCountInString(c))
			if t.right[i] && !header {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintln(w, rule.String())
	line(t.header, true)
	fmt.Fprintln(w, rule.String())
	for _, r := range t.rows {
		line(r, false)
	}
	fmt.Fprintln(w, rule.String())
}

// snapshotTableHeader is Cloudstic's snapshot table's columns, in its
// order; ours follow them (snapshotTable).
var snapshotTableHeader = []string{"SEQ", "CREATED", "SNAPSHOT HASH", "SOURCE", "ACCOUNT", "PATH", "TAGS"}

// snapshotTable is the table list and forget print: Cloudstic's columns
// first (SOURCE is the source's type, ACCOUNT the host that took the
// snapshot), then ours: the full source URI. With reasons set (forget's
// kept snapshots) a REASONS column follows TAGS, as in Cloudstic.
// seq gives each snapshot's number in the repository's list.
func snapshotTable(snaps []snapshot.WithID, seq func(snapshot.WithID) int, reasons func(int) string) *table {
	t := &table{header: append([]string(nil), snapshotTableHeader...), right: map[int]bool{0: true}}
	if reasons != nil {
		t.header = append(t.header, "REASONS")
	}
	t.header = append(t.header, "SOURCE URI")
	for i, s := range snaps {
		cells := []string{fmt.Sprint(seq(s)), s.Time.Local().Format(time.RFC3339), s.ID.String(), sourceType(s.Source),
			s.Hostname, s.Path, strings.Join(s.Tags, ", ")}
		if reasons != nil {
			cells = append(cells, reasons(i))
		}
		t.add(append(cells, s.Source)...)
	}
	return t
}

// sourceType is the scheme of a source URI ("local", "sftp"), which is
// what Cloudstic's SOURCE column shows.
func sourceType(uri string) string {
	if i := strings.Index(uri, ":"); i > 0 {
		return uri[:i]
	}
	return uri
}

// seqNumbers numbers snapshots as list does: 1 for the oldest of snaps
// (the repository's list, oldest first).
func seqNumbers(snaps []snapshot.WithID) func(snapshot.WithID) int {
	seqs := make(map[id.ID]int, len(snaps))
	for i, s := range snaps {
		seqs[s.ID] = i + 1
	}
	return func(s snapshot.WithID) int { return seqs[s.ID] }
}
