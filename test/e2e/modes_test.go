//go:build unix

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONOutput runs every command with -json, successful and failing:
// stdout is always exactly one JSON document.
func TestJSONOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := repoArgs{"-store", "local:" + filepath.Join(dir, "repo"), "-password", "pw"}
	src := smallTree(t, 8)
	steps := []struct {
		name string
		args []string
		code int
	}{
		{"init", r.with("init", "-json"), 0},
		{"backup", r.with("backup", "-json", "-source", "local:"+src), 0},
		{"backup dry run", r.with("backup", "-json", "-dry-run", "-source", "local:"+src), 0},
		{"list", r.with("list", "-json"), 0},
		{"ls", r.with("ls", "-json"), 0},
		{"restore", r.with("restore", "-json", "-output", filepath.Join(dir, "out")), 0},
		{"restore zip", r.with("restore", "-json", "-output", filepath.Join(dir, "out.zip")), 0},
		{"restore dry run", r.with("restore", "-json", "-dry-run", "-output", filepath.Join(dir, "out2")), 0},
		{"locks", r.with("locks", "-json"), 0},
		{"break-lock", r.with("break-lock", "-json"), 0},
		{"version", []string{"version", "-json"}, 0},
		{"init twice", r.with("init", "-json"), 1},
		{"wrong password", []string{"list", "-json", r[0], r[1], "-password", "wrong"}, 1},
		{"unknown snapshot", r.with("ls", "-json", "000000"), 1},
		{"zip exists", r.with("restore", "-json", "-output", filepath.Join(dir, "out.zip")), 1},
		{"bad flag value", r.with("restore", "-json", "-format", "rar"), 2},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			res := run(t, s.args...)
			wantCode(t, res, s.code)
			var doc any
			decodeJSON(t, res, &doc)
			if s.code != 0 {
				m, _ := doc.(map[string]any)
				if m["error"] == nil || m["exit_code"] != float64(s.code) {
					t.Errorf("error document %v: want error and exit_code %d", doc, s.code)
				}
			}
		})
	}
	var doc struct{ Snapshots []any }
	decodeJSON(t, mustRun(t, r.with("list", "-json")...), &doc)
	if len(doc.Snapshots) != 1 {
		t.Errorf("list -json: %d snapshots, want 1 (backup -dry-run must not save one)", len(doc.Snapshots))
	}
}

// TestEncryptionModes round-trips a tree through an unencrypted
// repository, one opened with a platform key, and one opened with its
// recovery key.
func TestEncryptionModes(t *testing.T) {
	t.Parallel()
	src := smallTree(t, 9)
	key := strings.Repeat("0f", 32)
	tests := []struct {
		name      string
		init      []string // flags for init
		open      []string // flags for the other commands
		wantEnc   bool
		useWords  bool // open with the recovery key init printed
		refuseOpt []string
	}{
		{name: "no-encryption", init: []string{"-no-encryption"}, wantEnc: false},
		{name: "encryption-key", init: []string{"-encryption-key", key}, open: []string{"-encryption-key", key}, wantEnc: true,
			refuseOpt: []string{"-encryption-key", strings.Repeat("0e", 32)}},
		{name: "recovery-key", init: []string{"-password", "pw", "-add-recovery-key"}, wantEnc: true, useWords: true,
			refuseOpt: []string{"-password", "wrong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := []string{"-store", "local:" + filepath.Join(t.TempDir(), "repo")}
			res := mustRun(t, append(append([]string{"init", "-json"}, store...), tt.init...)...)
			var out struct {
				Encrypted   bool   `json:"encrypted"`
				RecoveryKey string `json:"recovery_key"`
			}
			decodeJSON(t, res, &out)
			if out.Encrypted != tt.wantEnc {
				t.Errorf("init: encrypted %v, want %v", out.Encrypted, tt.wantEnc)
			}
			open := tt.open
			if tt.useWords {
				if n := len(strings.Fields(out.RecoveryKey)); n != 24 {
					t.Fatalf("init -add-recovery-key: recovery key has %d words: %q", n, out.RecoveryKey)
				}
				open = []string{"-recovery-key", out.RecoveryKey}
				// The password still works too.
				mustRun(t, repoArgs(append(store, "-password", "pw")).with("list")...)
			}
			r := repoArgs(append(store, open...))
			sid := backupJSON(t, r, src).SnapshotID
			dst := filepath.Join(t.TempDir(), "out")
			mustRun(t, r.with("restore", sid, "-output", dst)...)
			compareTrees(t, src, dst, cmpOpts{})
			if tt.refuseOpt != nil {
				res := run(t, repoArgs(append(store, tt.refuseOpt...)).with("list")...)
				wantCode(t, res, 1)
				wantOneLineError(t, res, "wrong password or key")
			}
			if tt.wantEnc {
				res := run(t, repoArgs(store).with("list")...)
				wantCode(t, res, 1)
				wantOneLineError(t, res, "encrypted")
			}
		})
	}
}

// TestConcurrentBackups runs 8 backups of different trees at once, as
// separate processes, into one repository: all 8 snapshots are listed and
// each restores byte for byte.
func TestConcurrentBackups(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	const n = 8
	srcs := make([]string, n)
	for i := range srcs {
		srcs[i] = smallTree(t, uint64(100+i))
	}
	type done struct {
		i   int
		res result
	}
	ch := make(chan done, n)
	for i, src := range srcs {
		go func() {
			c := runOpts{}.cmd(r.with("backup", "-json", "-lock-wait", "2m", "-source", "local:"+src))
			var stdout, stderr strings.Builder
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			res := result{args: c.Args[1:], stdout: stdout.String(), stderr: stderr.String()}
			if err != nil {
				res.code = -1
				if c.ProcessState != nil {
					res.code = c.ProcessState.ExitCode()
				}
			}
			ch <- done{i, res}
		}()
	}
	ids := map[string]string{} // source path → snapshot id
	for range n {
		d := <-ch
		if d.res.code != 0 {
			t.Errorf("backup %d: %v", d.i, d.res)
			continue
		}
		var out backupOut
		if err := json.Unmarshal([]byte(d.res.stdout), &out); err != nil {
			t.Errorf("backup %d: %v\n%v", d.i, err, d.res)
		}
		ids[srcs[d.i]] = out.SnapshotID
	}
	snaps := listJSON(t, r)
	if len(snaps) != n {
		t.Fatalf("list -json: %d snapshots, want %d", len(snaps), n)
	}
	for _, s := range snaps {
		if ids[s.Path] != s.ID {
			t.Errorf("list -json: snapshot %s of %s, backup said %s", s.ID, s.Path, ids[s.Path])
		}
	}
	for i, src := range srcs {
		dst := filepath.Join(t.TempDir(), "out")
		mustRun(t, r.with("restore", ids[src], "-output", dst)...)
		compareTrees(t, src, dst, cmpOpts{})
		if t.Failed() {
			t.Fatalf("restore of backup %d differs", i)
		}
	}
}
