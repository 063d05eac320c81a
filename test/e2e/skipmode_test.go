//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lsattr returns the flags column of lsattr -d for path (e2fsprogs).
func lsattr(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("lsattr", "-d", path).CombinedOutput()
	if err != nil {
		t.Fatalf("lsattr %s: %v\n%s", path, err, out)
	}
	return strings.Fields(string(out))[0]
}

// TestSkipModeAndFlags: file flags (chattr) are backed up and restored by
// default; -skip-flags records none; -skip-mode records no permission
// bits, owners or flags.
func TestSkipModeAndFlags(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(src, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(script, 1234, 1234); err != nil && os.Getuid() == 0 {
		t.Fatal(err)
	}
	sh(t, "chattr", "+dA", script)
	sh(t, "chattr", "+d", filepath.Join(src, "sub"))
	withFlags, noFlags := lsattr(t, script), lsattr(t, filepath.Join(src, "sub"))

	restore := func(args ...string) string {
		t.Helper()
		out := backupJSON(t, r, src, args...)
		dst := t.TempDir()
		mustRun(t, r.with("restore", "-output", dst, out.SnapshotID)...)
		return dst
	}
	dst := restore()
	if got := lsattr(t, filepath.Join(dst, "run.sh")); got != withFlags {
		t.Errorf("restored run.sh flags %s, want %s", got, withFlags)
	}
	if got := lsattr(t, filepath.Join(dst, "sub")); got != noFlags {
		t.Errorf("restored sub flags %s, want %s", got, noFlags)
	}
	compareTrees(t, src, dst, cmpOpts{owners: os.Getuid() == 0})

	dst = restore("-skip-flags")
	if got := lsattr(t, filepath.Join(dst, "run.sh")); strings.ContainsAny(got, "dA") {
		t.Errorf("-skip-flags: restored run.sh has flags %s", got)
	}
	if fi, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("-skip-flags: run.sh mode %v (%v), want 0750 kept", fi.Mode(), err)
	}

	dst = restore("-skip-mode")
	for rel, want := range map[string]os.FileMode{"run.sh": 0o644, "sub": 0o755} {
		fi, err := os.Stat(filepath.Join(dst, rel))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("-skip-mode: %s mode %v (%v), want %v", rel, fi.Mode().Perm(), err, want)
		}
	}
	if got := lsattr(t, filepath.Join(dst, "run.sh")); strings.ContainsAny(got, "dA") {
		t.Errorf("-skip-mode: restored run.sh has flags %s", got)
	}
	if e, ok := scanTree(t, dst)["run.sh"]; os.Getuid() == 0 && (!ok || e.st.Uid != 0) {
		t.Errorf("-skip-mode: restored run.sh owned by %d, want root (no owner recorded)", e.st.Uid)
	}
}
