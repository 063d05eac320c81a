package hostile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// binary is the cloudstic executable TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, func(_, bin string) { binary = bin }))
}

type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("cloudstic %q: exit %d\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.stdout, r.stderr)
}

// run runs the binary with no CLOUDSTIC_ variables from the environment.
func run(t *testing.T, args ...string) result {
	t.Helper()
	c := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLOUDSTIC_") {
			c.Env = append(c.Env, kv)
		}
	}
	res := result{args: args}
	res.stdout, res.stderr, res.code = testbin.Output(t, c)
	if strings.Contains(res.stderr, "panic:") || strings.Contains(res.stderr, "goroutine ") {
		t.Fatalf("panic: %v", res)
	}
	return res
}

// repoWithBackup makes an encrypted repository holding one backup of a
// small tree and returns the store directory, the global flags and the source.
func repoWithBackup(t *testing.T) (string, []string, string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for name, content := range map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "sub/c.txt": "charlie\n"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := filepath.Join(dir, "store")
	flags := []string{"-store", "local:" + st, "-password", "right-pw"}
	for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src}} {
		if res := run(t, append(args, flags...)...); res.code != 0 {
			t.Fatalf("%v", res)
		}
	}
	return st, flags, src
}

func wantOneLine(t *testing.T, res result, code int, subs ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d: %v", res.code, code, res)
	}
	// Runs that give -password on the command line also get its one-line
	// warning (other users can read a command line); the error is the rest.
	msg := strings.TrimRight(withoutPasswordWarning(res.stderr), "\n")
	if msg == "" || strings.Contains(msg, "\n") {
		t.Errorf("want a one-line error: %v", res)
	}
	for _, s := range subs {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q does not mention %q", msg, s)
		}
	}
}

// TestHostileRepository runs commands against a repository damaged in one
// way each: a one-line error, exit 1, no panic, no secret printed.
func TestHostileRepository(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, st string, flags []string) []string
		subs   []string
	}{
		{"wrong password", func(t *testing.T, st string, flags []string) []string {
			return append([]string{"list"}, append(flags, "-password", "wrong-pw")...)
		}, []string{"wrong password"}},
		{"config from a future version", func(t *testing.T, st string, flags []string) []string {
			p := filepath.Join(st, "config")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			m["version"] = 99
			if data, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return append([]string{"list"}, flags...)
		}, []string{"99"}},
		{"garbage config", func(t *testing.T, st string, flags []string) []string {
			if err := os.WriteFile(filepath.Join(st, "config"), []byte("\x00garbage"), 0o600); err != nil {
				t.Fatal(err)
			}
			return append([]string{"backup", "-source", "local:" + st}, flags...)
		}, []string{"config"}},
		{"all key slots damaged", func(t *testing.T, st string, flags []string) []string {
			slots, err := filepath.Glob(filepath.Join(st, "keys", "*"))
			if err != nil || len(slots) == 0 {
				t.Fatal("no key slots", err)
			}
			for _, s := range slots {
				if err := os.WriteFile(s, []byte("{"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return append([]string{"list"}, flags...)
		}, []string{"keys/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, flags, _ := repoWithBackup(t)
			res := run(t, tc.damage(t, st, flags)...)
			wantOneLine(t, res, 1, tc.subs...)
			for _, secret := range []string{"right-pw", "wrong-pw"} {
				if strings.Contains(res.stdout+res.stderr, secret) {
					t.Errorf("output holds the password %q: %v", secret, res)
				}
			}
		})
	}
}

// TestRestoreDamagedPack flips a byte in every data pack: restore exits
// non-zero and names each damaged file, leaving no truncated file behind.
func TestRestoreDamagedPack(t *testing.T) {
	t.Parallel()
	st, flags, src := repoWithBackup(t)
	packs, err := filepath.Glob(filepath.Join(st, "data", "*", "*"))
	if err != nil || len(packs) == 0 {
		t.Fatal("no packs", err)
	}
	// Damage the first blob of every pack (tree and data alike).
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[20] ^= 0xff
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	res := run(t, append([]string{"restore", "-output", out}, flags...)...)
	if res.code == 0 {
		t.Fatalf("restore of damaged data exited 0: %v", res)
	}
	err = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s restored with wrong content (%d bytes): %v", rel, len(got), err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	t.Logf("%v", res)
}

// withoutPasswordWarning removes the warning a -password on the command
// line prints.
func withoutPasswordWarning(stderr string) string {
	first, rest, _ := strings.Cut(stderr, "\n")
	if strings.HasPrefix(first, "warning: -password on the command line") {
		return rest
	}
	return stderr
}
