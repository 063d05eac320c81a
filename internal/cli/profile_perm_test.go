//go:build !windows

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// TestProfilesFileExposureWarned: a profiles.yaml other users may read,
// holding a literal secret, loads with one warning on stderr per run
// (backup -all-profiles loads it once for the run and once per profile),
// naming the file, its mode and the field; the run goes on. After chmod
// 600 there is no warning.
func TestProfilesFileExposureWarned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "repo")
	src := filepath.Join(dir, "src")
	mustWrite(t, filepath.Join(src, "a.txt"), "a\n")
	profiles := filepath.Join(dir, "profiles.yaml")
	mustWrite(t, profiles, `version: 1
stores:
  home:
    uri: local:`+store+`
    password_secret: env://REPO_PW
    store_sftp_password: not-a-reference
profiles:
  one:
    source: local:`+src+`
    store: home
  two:
    source: local:`+src+`
    store: home
`)
	if err := os.Chmod(profiles, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLOUDSTIC_PROFILES_FILE": profiles, "REPO_PW": "pw", "HOME": dir}
	mainWith(t, env, "init", "-store", "local:"+store, "-password", "pw", "-quiet").check(t, cli.ExitOK, nil, nil)

	o := mainWith(t, env, "backup", "-all-profiles")
	o.check(t, cli.ExitOK, nil, []string{profiles, "(mode 0644)", "stores.home.store_sftp_password", "chmod 600"})
	if n := strings.Count(o.stderr, "stores.home.store_sftp_password"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, o.stderr)
	}
	if err := os.Chmod(profiles, 0o600); err != nil {
		t.Fatal(err)
	}
	o = mainWith(t, env, "backup", "-profile", "one")
	o.check(t, cli.ExitOK, nil, nil)
	if strings.Contains(o.stderr, "warning") {
		t.Errorf("a 0600 profiles file warned:\n%s", o.stderr)
	}
}
