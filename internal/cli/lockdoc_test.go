package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestLocksAsDocumented runs each command while another process holds a
// shared, then an exclusive lock: a command is refused exactly when the
// lock the README's command table gives it conflicts with the one held,
// so the table and the code cannot drift apart (for copy: the lock on the
// destination). (mount, which needs FUSE,
// is covered by test/e2e; break-lock would remove the held lock.)
func TestLocksAsDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := commandTableLocks(string(readme))
	const key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "f"), "data")
	run := func(args ...string) uxResult {
		return uxRun(t, dir, append(args, "-encryption-key", key)...)
	}
	for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src}, {"backup", "-source", "local:" + src},
		{"key", "add", "-label", "spare", "-new-encryption-key", strings.Repeat("ab", 32)}} {
		if r := run(args...); r.code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	// A second repository for copy to copy from.
	other := t.TempDir()
	for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src, "-host", "other"}} {
		if r := uxRun(t, other, append(args, "-encryption-key", key)...); r.code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	from := []string{"-from-store", "local:" + filepath.Join(other, "store"), "-from-encryption-key", key}
	cases := []struct {
		row    string   // the README row: its first cell starts with this
		phrase string   // what its lock cell says about this form
		kind   string   // the lock that phrase means: none, shared, exclusive
		args   []string // the command run
	}{
		{"`backup -source", "shared", "shared", []string{"backup", "-source", "local:" + src}},
		{"`backup -source", "none with `-dry-run`", "none", []string{"backup", "-source", "local:" + src, "-dry-run"}},
		{"`restore", "shared, always", "shared", []string{"restore", "latest", "-output", filepath.Join(dir, "out"), "-dry-run"}},
		{"`list`", "none", "none", []string{"list"}},
		{"`list`", "none", "none", []string{"ls", "latest"}},
		{"`forget", "none", "none", []string{"forget", "-keep-last", "9"}},
		{"`forget", "exclusive for its prune step", "exclusive", []string{"forget", "-keep-last", "9", "-prune"}},
		{"`tag", "shared", "shared", []string{"tag", "-add", "x", "latest"}},
		{"`tag", "none with `-dry-run`", "none", []string{"tag", "-add", "y", "latest", "-dry-run"}},
		{"`prune", "exclusive", "exclusive", []string{"prune"}},
		{"`prune", "none with `-dry-run`", "none", []string{"prune", "-dry-run"}},
		{"`check", "none", "none", []string{"check"}},
		{"`repair", "none", "none", []string{"repair", "snapshots"}},
		{"`repair", "`index`, `config`: exclusive", "exclusive", []string{"repair", "index"}},
		{"`repair", "none with `-dry-run`", "none", []string{"repair", "index", "-dry-run"}},
		{"`diff", "none", "none", []string{"diff", "latest"}},
		{"`find", "shared", "shared", []string{"find", "f"}},
		{"`dump", "shared", "shared", []string{"dump", "latest", "/f"}},
		{"`stats", "shared", "shared", []string{"stats"}},
		{"`cat", "none", "none", []string{"cat", "config"}},
		{"`key", "none", "none", []string{"key", "list"}},
		{"`key", "`passwd`, `remove`: exclusive", "exclusive", []string{"key", "remove", "spare"}},
		{"`key", "`passwd`, `remove`: exclusive", "exclusive", []string{"key", "passwd", "-new-password", "p"}},
		{"`locks`", "none", "none", []string{"locks"}},
		{"`copy", "shared on both repositories", "shared", append([]string{"copy"}, from...)},
		{"`copy", "none with `-dry-run`", "none", append([]string{"copy", "-dry-run"}, from...)},
		{"`rewrite", "shared", "shared", []string{"rewrite", "-exclude", "nothing-matches", "latest"}},
		{"`rewrite", "none with `-dry-run`", "none", []string{"rewrite", "-exclude", "f", "-dry-run"}},
	}
	for _, c := range cases {
		cell, ok := "", false
		for first, lockCell := range rows {
			if strings.HasPrefix(first, c.row) {
				cell, ok = lockCell, true
			}
		}
		if !ok || !strings.Contains(cell, c.phrase) {
			t.Errorf("README row %s: lock %q does not say %q", c.row, cell, c.phrase)
		}
	}
	st := local.New(filepath.Join(dir, "store"))
	for _, held := range []string{"shared", "exclusive"} {
		t.Run(held, func(t *testing.T) {
			ctx := context.Background()
			take := lock.AcquireShared
			if held == "exclusive" {
				take = lock.AcquireExclusive
			}
			l, err := take(ctx, st, "other", lock.Options{Hostname: "elsewhere", PID: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				blocked := c.kind == "exclusive" || (c.kind == "shared" && held == "exclusive")
				r := run(c.args...)
				refused := r.code == ExitError && strings.Contains(r.stderr, "by elsewhere (pid 1)")
				if refused != blocked || (!blocked && r.code != ExitOK) {
					t.Errorf("%v with a %s lock held: exit %d, want refused: %v (README: %s)\n%s%s",
						c.args, held, r.code, blocked, c.kind, r.stdout, r.stderr)
				}
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// commandTableLocks maps the first cell of each row of the README's
// command table to its lock cell.
func commandTableLocks(readme string) map[string]string {
	rows := map[string]string{}
	_, table, _ := strings.Cut(readme, "| command | what it does | lock |")
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		// Cells are split on " | ": a \| inside a cell has no spaces.
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		rows[cells[0]] = cells[len(cells)-1]
	}
	return rows
}
