package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// TestRestoreSaysPrivileges: a restore that gives a setuid file back says
// so in its last line, and with -no-setuid says what it withheld.
func TestRestoreSaysPrivileges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	mustWrite(t, filepath.Join(src, "su"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(src, "su"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + filepath.Join(dir, "repo"), "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "backup", "-source", "local:"+src).check(t, cli.ExitOK, nil, nil)
	mainWith(t, env, "restore", "-output", filepath.Join(dir, "a")).check(t, cli.ExitOK,
		[]string{"Restored with their privileges: 1 setuid/setgid files, 0 device nodes, 0 file capabilities (-no-setuid"}, nil)
	mainWith(t, env, "restore", "-no-setuid", "-output", filepath.Join(dir, "b")).check(t, cli.ExitOK,
		[]string{"Withheld: 1 setuid/setgid files"}, nil)
	mainWith(t, env, "restore", "-no-setuid", "-json", "-output", filepath.Join(dir, "c")).check(t, cli.ExitOK,
		[]string{`"withheld": {`, `"setuid_files": 1`}, nil)
}
