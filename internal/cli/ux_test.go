package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/diff"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// uxJSON decodes exactly one JSON document from s into v, failing on
// anything after it.
func uxJSON(t *testing.T, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, s)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON document:\n%s", s)
	}
}

func uxOK(t *testing.T, dir string, args ...string) uxResult {
	t.Helper()
	r := uxRun(t, dir, args...)
	if r.code != ExitOK {
		t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func uxWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKeyCommands(t *testing.T) {
	dir := t.TempDir()
	uxOK(t, dir, "init", "-password", "one")
	steps := []struct {
		args     []string
		code     int
		contains string // in stdout+stderr
	}{
		{[]string{"key", "add", "-label", "laptop", "-new-password", "two", "-password", "one"}, ExitOK, "added"},
		{[]string{"key", "add", "-label", "laptop", "-new-password", "x", "-password", "one"}, ExitUsage, "choose another -label"},
		{[]string{"key", "add", "-new-password", "x", "-password", "wrong"}, ExitError, "wrong password or key"},
		{[]string{"key", "add", "-password", "one"}, ExitUsage, "-new-password"},
		{[]string{"list", "-password", "two"}, ExitOK, ""},
		{[]string{"key", "passwd", "-new-password", "three", "-password", "one"}, ExitOK, "Password changed"},
		{[]string{"list", "-password", "one"}, ExitError, "wrong password or key"},
		{[]string{"key", "remove", "nosuch", "-password", "three"}, ExitError, "cloudstic key list"},
		{[]string{"key", "remove", "laptop", "-password", "three"}, ExitOK, "removed"},
		{[]string{"key", "remove", "password 1", "-password", "three"}, ExitError, "last key slot"},
		{[]string{"key", "add-recovery", "-password", "three"}, ExitOK, "RECOVERY KEY"},
		{[]string{"key"}, ExitUsage, "give the subcommand first"},
		{[]string{"key", "remove", "-password", "three"}, ExitUsage, "give the label"},
	}
	for _, s := range steps {
		t.Run(strings.Join(s.args, " "), func(t *testing.T) {
			r := uxRun(t, dir, s.args...)
			if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.contains) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", r.code, s.code, r.stdout, r.stderr, s.contains)
			}
		})
	}
	var slots []map[string]any
	uxJSON(t, uxOK(t, dir, "key", "list", "-json").stdout, &slots)
	if len(slots) != 2 || slots[0]["kind"] != "password" || slots[1]["kind"] != "recovery" {
		t.Fatalf("slots = %v", slots)
	}
}

func TestDiffAndCat(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "keep.txt"), "same")
	uxWrite(t, filepath.Join(src, "gone.txt"), "bye")
	uxWrite(t, filepath.Join(src, "sub", "edit.txt"), "v1")
	uxOK(t, dir, "init", "-no-encryption")
	var b1, b2 struct {
		SnapshotID string `json:"snapshot_id"`
	}
	uxJSON(t, uxOK(t, dir, "backup", "-source", "local:"+src, "-json").stdout, &b1)
	if err := os.Remove(filepath.Join(src, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	uxWrite(t, filepath.Join(src, "sub", "edit.txt"), "version 2")
	uxWrite(t, filepath.Join(src, "new", "file.txt"), "hello")
	uxJSON(t, uxOK(t, dir, "backup", "-source", "local:"+src, "-json").stdout, &b2)

	var d struct {
		Changes []diffChange `json:"changes"`
		Summary diffSummary  `json:"summary"`
	}
	uxJSON(t, uxOK(t, dir, "diff", b1.SnapshotID[:8], "latest", "-json").stdout, &d)
	got := map[string]string{}
	for _, c := range d.Changes {
		got[c.Path] = c.Change
	}
	want := map[string]string{"gone.txt": diff.Removed, "sub/edit.txt": diff.Modified, "new": diff.Added, "new/file.txt": diff.Added}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("%s: %q, want %q (all: %v)", p, got[p], c, got)
		}
	}
	if got["keep.txt"] != "" {
		t.Errorf("keep.txt reported as %q", got["keep.txt"])
	}
	if d.Summary.BytesAdded != int64(len("version 2")-len("v1")+len("hello")) || d.Summary.BytesRemoved != 3 {
		t.Errorf("summary = %+v", d.Summary)
	}
	// One snapshot: compared with its parent, same result.
	if r := uxOK(t, dir, "diff", b2.SnapshotID[:8]); !strings.Contains(r.stdout, "\nA new/file.txt\n") {
		t.Errorf("diff with parent:\n%s", r.stdout)
	}

	var cfg map[string]any
	uxJSON(t, uxOK(t, dir, "cat", "config").stdout, &cfg)
	if cfg["encrypted"] != false {
		t.Errorf("config = %v", cfg)
	}
	var snap struct {
		ID       string `json:"id"`
		Snapshot struct {
			Tree string `json:"tree"`
		} `json:"snapshot"`
	}
	uxJSON(t, uxOK(t, dir, "cat", "snapshot", "latest").stdout, &snap)
	if snap.ID != b2.SnapshotID {
		t.Fatalf("cat snapshot latest = %s, want %s", snap.ID, b2.SnapshotID)
	}
	var tr struct {
		Nodes []struct{ Name string } `json:"nodes"`
	}
	uxJSON(t, uxOK(t, dir, "cat", "tree", snap.Snapshot.Tree).stdout, &tr)
	if len(tr.Nodes) != 3 {
		t.Errorf("root tree = %+v", tr)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cat", "lock", "index/lock.exclusive"}, ExitError, "cloudstic locks"},
		{[]string{"cat", "lock", "../config"}, ExitUsage, "not a lock key"},
		{[]string{"cat", "tree", "00"}, ExitUsage, "64 hex digits"},
		{[]string{"cat", "config", "x"}, ExitUsage, "no argument"},
		{[]string{"diff"}, ExitUsage, "one or two snapshots"},
		{[]string{"diff", b1.SnapshotID[:8]}, ExitUsage, "no parent"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := uxRun(t, dir, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr %q, want %q", r.code, c.code, r.stderr, c.want)
			}
		})
	}
}

func TestNotInitializedErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"cat", "config"}, {"key", "list"}, {"key", "add", "-password", "x", "-new-password", "y"},
		{"diff", "latest", "latest"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := uxRun(t, dir, args...)
			if r.code != ExitError || !strings.Contains(r.stderr, "repository not initialized at local:") ||
				!strings.Contains(r.stderr, "run 'cloudstic init'") {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

func TestJSONProgress(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for i := range 20 {
		uxWrite(t, filepath.Join(src, "d", string(rune('a'+i))), strings.Repeat("x", 1000*i))
	}
	uxOK(t, dir, "init", "-no-encryption")
	for _, cmd := range [][]string{{"backup", "-source", "local:" + src}, {"restore", "-output", filepath.Join(dir, "out")}} {
		t.Run(cmd[0], func(t *testing.T) {
			r := uxOK(t, dir, append(cmd, "-json", "-json-progress")...)
			var doc map[string]any
			uxJSON(t, r.stdout, &doc) // stdout: exactly one document
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			var last operation.Progress
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
				t.Fatalf("last stderr line is not a progress line: %v\n%s", err, r.stderr)
			}
			if last.Type != "done" || last.Op != cmd[0] || last.FilesDone != 20 || last.BytesDone != 190000 {
				t.Fatalf("final progress line = %+v", last)
			}
		})
	}
}

func TestQuietAndJSONHaveNoProgress(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	uxWrite(t, filepath.Join(src, "f"), "data")
	uxOK(t, dir, "init", "-no-encryption")
	r := uxOK(t, dir, "backup", "-source", "local:"+src, "-quiet")
	if r.stderr != "" {
		t.Fatalf("stderr with -quiet on a non-terminal: %q", r.stderr)
	}
}

func TestStatusLine(t *testing.T) {
	at := func(p operation.Progress) operation.Progress {
		p.Op, p.ElapsedSeconds = "backup", 65
		if p.ETASeconds == 0 {
			p.ETASeconds = -1
		}
		return p
	}
	cases := []struct {
		name  string
		p     operation.Progress
		width int
		want  string
	}{
		{"totals", at(operation.Progress{FilesDone: 5, FilesTotal: 10, BytesDone: 50 << 20, BytesTotal: 100 << 20, Current: "/data/file.bin",
			BytesPerSecond: 10 << 20, ETASeconds: 5}), 200,
			"backup 1:05 5/10 files 50.0 MiB/100.0 MiB 50%  10.0 MiB/s ETA 0:05  /data/file.bin"},
		{"no totals", at(operation.Progress{FilesDone: 3, BytesDone: 2048}), 200, "backup 1:05 3 files 2.0 KiB  0 B/s"},
		{"packs", at(operation.Progress{FilesDone: 3, FilesTotal: 4, BytesDone: 2048, Unit: "packs"}), 200, "backup 1:05 3/4 packs 2.0 KiB  0 B/s"},
		{"long path", at(operation.Progress{FilesDone: 1, BytesDone: 1, BytesPerSecond: 1, Current: "/a/very/long/path/to/some/file.txt"}), 46,
			"backup 1:05 1 files 1 B  1 B/s  …some/file.txt"},
		{"narrow", at(operation.Progress{FilesDone: 1, BytesDone: 1, BytesPerSecond: 1}), 10, "backup 1:0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := statusLine(c.p, c.width)
			if got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
			if n := len([]rune(got)); n > c.width {
				t.Fatalf("line is %d runes, width %d", n, c.width)
			}
		})
	}
}

func TestClearingWriter(t *testing.T) {
	var out bytes.Buffer
	p := &progress{out: &out, drawn: true}
	if _, err := (clearingWriter{p}).Write([]byte("warning: x\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "\r\x1b[2Kwarning: x\n" || p.drawn {
		t.Fatalf("out = %q, drawn = %v", out.String(), p.drawn)
	}
}
