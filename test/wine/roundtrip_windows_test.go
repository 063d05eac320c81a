//go:build winetest

package wine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exe is the Windows binary under test, from CLOUDSTIC_WINE_EXE.
func exe(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CLOUDSTIC_WINE_EXE")
	if p == "" {
		t.Fatal("CLOUDSTIC_WINE_EXE not set: run this test with scripts/ports.sh wine")
	}
	return p
}

// cloudstic runs the binary with args and the test password; it fails
// the test when the exit status is not want.
func cloudstic(t *testing.T, want int, args ...string) string {
	t.Helper()
	c := exec.Command(exe(t), args...)
	c.Env = append(os.Environ(), "CLOUDSTIC_PASSWORD=wine pw", "XDG_CACHE_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("cloudstic %q: %v", args, err)
	}
	if code != want {
		t.Fatalf("cloudstic %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// tree is the test's source: names with spaces, a path longer than
// Windows' 260 characters, a read-only file, an empty directory.
func tree(t *testing.T, src string) map[string]string {
	t.Helper()
	long := filepath.Join("deep", strings.Repeat("d", 100), strings.Repeat("e", 100), strings.Repeat("f", 60)+".txt")
	files := map[string]string{
		"plain.txt":                            "plain",
		"name with spaces.txt":                 "spaces",
		filepath.Join("sub dir", "inner file"): "inner",
		long:                                   "long path",
		"read-only.txt":                        "read-only",
	}
	if n := len(filepath.Join(src, long)); n <= 260 {
		t.Fatalf("the long path has %d characters, want more than 260", n)
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "read-only.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	return files
}

// compare checks that out holds files, with their contents, the read-only
// file still read-only, and the empty directory.
func compare(t *testing.T, out string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || string(got) != content {
			t.Errorf("%s restored as %q (%v), want %q", name, got, err, content)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "read-only.txt")); err != nil || fi.Mode().Perm()&0o200 != 0 {
		t.Errorf("read-only.txt restored writable or missing: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("the empty directory was not restored: %v", err)
	}
}

// snapshots runs list -json and returns the snapshot ids.
func snapshots(t *testing.T, store string) []string {
	t.Helper()
	var doc struct{ Snapshots []struct{ ID string } }
	if err := json.Unmarshal([]byte(cloudstic(t, 0, "list", "-store", store, "-json")), &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range doc.Snapshots {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestRoundTrip runs cloudstic.exe on Windows paths: init of a local store
// (given with a drive letter, and with forward slashes), backup, list,
// restore and compare, a second backup after a change, check, forget and
// prune, and check again.
func TestRoundTrip(t *testing.T) {
	base := t.TempDir()
	if filepath.VolumeName(base) == "" {
		t.Fatalf("temporary directory %s has no drive letter", base)
	}
	src := filepath.Join(base, "my files")
	files := tree(t, src)
	for _, tc := range []struct{ name, store string }{
		{"backslashes", "local:" + filepath.Join(base, "store one")},
		{"forward slashes", "local:" + filepath.ToSlash(filepath.Join(base, "store two"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloudstic(t, 0, "init", "-store", tc.store)
			cloudstic(t, 0, "backup", "-store", tc.store, "-source", "local:"+src)
			first := snapshots(t, tc.store)
			if len(first) != 1 {
				t.Fatalf("%d snapshots after one backup, want 1", len(first))
			}
			out := filepath.Join(t.TempDir(), "restored")
			cloudstic(t, 0, "restore", "-store", tc.store, first[0], "-output", out)
			compare(t, out, files)

			changed := filepath.Join(src, "plain.txt")
			if err := os.WriteFile(changed, []byte("plain, changed"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.WriteFile(changed, []byte("plain"), 0o644) })
			cloudstic(t, 0, "backup", "-store", tc.store, "-source", "local:"+src)
			if n := len(snapshots(t, tc.store)); n != 2 {
				t.Fatalf("%d snapshots after two backups, want 2", n)
			}
			cloudstic(t, 0, "check", "-store", tc.store, "-read-data")
			cloudstic(t, 0, "forget", "-store", tc.store, "-keep-last", "1", "-prune")
			left := snapshots(t, tc.store)
			if len(left) != 1 || left[0] == first[0] {
				t.Fatalf("after forget -keep-last 1: %v, want one snapshot other than %s", left, first[0])
			}
			cloudstic(t, 0, "check", "-store", tc.store, "-read-data")
			out2 := filepath.Join(t.TempDir(), "restored")
			cloudstic(t, 0, "restore", "-store", tc.store, left[0], "-output", out2)
			want := map[string]string{}
			for k, v := range files {
				want[k] = v
			}
			want["plain.txt"] = "plain, changed"
			compare(t, out2, want)
		})
	}
}

// TestErrors: a store that does not exist, a wrong password and several
// backup roots (refused on Windows) each fail with a non-zero exit and one
// line.
func TestErrors(t *testing.T) {
	base := t.TempDir()
	store := "local:" + filepath.Join(base, "store")
	cloudstic(t, 0, "init", "-store", store)
	for _, tc := range []struct {
		name, want string // want: in the error line
		args       []string
	}{
		{"missing store", "none", []string{"list", "-store", "local:" + filepath.Join(base, "none")}},
		{"wrong password", "password", []string{"list", "-store", store, "-password", "wrong"}},
		{"several roots", "not supported on Windows", []string{"backup", "-store", store, "-password", "wine pw",
			"-source", "local:" + base, "-source", "local:" + os.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command(exe(t), tc.args...)
			c.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
			var stderr bytes.Buffer
			c.Stderr = &stderr
			var ee *exec.ExitError
			if err := c.Run(); !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit %v, want non-zero", ee)
			}
			if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; lines != 1 {
				t.Errorf("stderr has %d lines, want 1:\n%s", lines, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}
