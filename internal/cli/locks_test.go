package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// An unreadable lock object is shown honestly by locks and break-lock: its
// key, size, store modification time and escaped first bytes with the parse
// error, never an empty holder and a zero time; -json says readable: false.
func TestUnreadableLockShown(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "pw")
	garbage := "\x00\x01not a lock\n" + strings.Repeat("x", 100)
	uxWrite(t, filepath.Join(dir, "store", "index", "lock.exclusive"), garbage)

	r := uxOK(t, dir, "locks")
	for _, want := range []string{"exclusive  unreadable", "unreadable index/lock.exclusive (113 bytes, written 20",
		`first bytes: "\x00\x01not a lock\nxxx`, "unreadable repository lock: not JSON"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("locks output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "0001-01-01") || strings.Contains(r.stdout, "holder: ,") {
		t.Errorf("locks shows zero values for an unreadable lock:\n%s", r.stdout)
	}
	var docs []lockDoc
	if err := json.Unmarshal([]byte(uxOK(t, dir, "locks", "-json").stdout), &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Readable || docs[0].Kind != "exclusive" || docs[0].Size != 113 ||
		docs[0].ModTime == nil || docs[0].AcquiredAt != nil || !strings.HasPrefix(docs[0].Excerpt, `"\x00\x01not a lock`) {
		t.Fatalf("locks -json: %+v", docs)
	}

	r = uxOK(t, dir, "break-lock")
	if !strings.Contains(r.stdout, "removed index/lock.exclusive: unreadable (113 bytes") || strings.Contains(r.stdout, "0001-01-01") {
		t.Fatalf("break-lock output:\n%s", r.stdout)
	}
	if r := uxOK(t, dir, "locks"); !strings.Contains(r.stdout, "no locks") {
		t.Fatalf("after break-lock:\n%s", r.stdout)
	}
}

// -debug names the lock protocol the store's capabilities select.
func TestDebugNamesLockProtocol(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "pw")
	r := uxOK(t, dir, "locks", "-debug")
	if want := "lock protocol: intents + create-if-absent + compare-and-swap (store has both conditional writes)"; !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

// backup and restore write one shared lock each: the one their open
// starts taking beside the key's derivation (operation.LockAhead), which
// the operation then holds; a dry-run backup writes none. The password
// makes the open derive a key, as users' opens do.
func TestOneLockPerRun(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "f"), "content\n")
	uxOK(t, dir, "init", "-password", "pw")
	for _, tc := range []struct {
		name  string
		args  []string
		locks int
	}{
		{"backup", []string{"backup", "-source", "local:" + src}, 1},
		{"dry-run backup", []string{"backup", "-dry-run", "-source", "local:" + src}, 0},
		{"restore", []string{"restore", "-output", filepath.Join(dir, "out")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := uxOK(t, dir, append(tc.args, "-password", "pw", "-debug")...)
			n := 0
			for _, line := range strings.Split(r.stderr, "\n") {
				if strings.Contains(line, "store PUT") && strings.Contains(line, " index/lock.shared/") {
					n++
				}
			}
			if n != tc.locks {
				t.Errorf("%d shared locks written, want %d:\n%s", n, tc.locks, r.stderr)
			}
			if r := uxOK(t, dir, "locks"); !strings.Contains(r.stdout, "no locks") {
				t.Errorf("locks left:\n%s", r.stdout)
			}
		})
	}
}
