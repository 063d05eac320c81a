//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/test/testbin"
)

// profileEnv is a config directory and the environment a profiles run
// needs (no password on any command line).
type profileEnv struct {
	dir, cfg string
	env      []string
}

func newProfileEnv(t *testing.T, extra ...string) *profileEnv {
	dir := t.TempDir()
	p := &profileEnv{dir: dir, cfg: filepath.Join(dir, "cfg")}
	p.env = append([]string{"CLOUDSTIC_CONFIG_DIR=" + p.cfg, "HOME=" + dir}, extra...)
	return p
}

func (p *profileEnv) run(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, runOpts{env: p.env, dir: p.dir}, args...)
}

func (p *profileEnv) mustRun(t *testing.T, args ...string) result {
	t.Helper()
	res := p.run(t, args...)
	if res.code != 0 {
		t.Fatalf("want exit 0, got %v", res)
	}
	return res
}

// runStdin runs the binary with stdin from a string.
func (p *profileEnv) runStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	c := runOpts{env: p.env, dir: p.dir}.cmd(args)
	c.Stdin = strings.NewReader(stdin)
	res := result{args: args}
	res.stdout, res.stderr, res.code = testbin.Output(t, c)
	return res
}

// writeSource makes a directory with a few files to back up.
func writeSource(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestProfilesAllStores is issue 17's done-when: a Cloudstic user's
// profiles.yaml with two stores (S3 and SFTP), three enabled profiles (the
// third on the local store CLOUDSTIC_STORE names) and a disabled
// cloud-drive profile, its secrets behind env://, file:// and
// config-token:// references, backs up every profile with -all-profiles.
func TestProfilesAllStores(t *testing.T) {
	s3 := needEnv(t, "scripts/s3-server.sh", "S3_TEST_ENDPOINT", "S3_TEST_BUCKET", "S3_TEST_ACCESS_KEY_ID", "S3_TEST_SECRET_ACCESS_KEY")
	sf := needEnv(t, "scripts/sftp-server.sh", "SFTP_TEST_USER", "SFTP_TEST_PORT", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH")
	prefix := randName(t, "profiles-")
	if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(data, s3["S3_TEST_BUCKET"], prefix)) }) // best-effort cleanup
	}
	sftpDir := filepath.Join(sf["SFTP_TEST_PATH"], randName(t, "profiles-"))
	t.Cleanup(func() { _ = os.RemoveAll(sftpDir) }) // best-effort cleanup

	p := newProfileEnv(t, "BUCKET_AK="+s3["S3_TEST_ACCESS_KEY_ID"], "BUCKET_SK="+s3["S3_TEST_SECRET_ACCESS_KEY"],
		"LAPTOP_PW=laptop-pass", "CLOUDSTIC_PASSWORD_REF=env://LAPTOP_PW")
	local := filepath.Join(p.dir, "local-repo")
	p.env = append(p.env, "CLOUDSTIC_STORE=local:"+local)
	pwFile := filepath.Join(p.dir, "bucket.pw")
	if err := os.WriteFile(pwFile, []byte("bucket-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := p.runStdin(t, "nas-pass\n", "secret", "set", "config-token://cloudstic/nas"); res.code != 0 {
		t.Fatalf("secret set: %v", res)
	}
	docs := writeSource(t, filepath.Join(p.dir, "docs"), map[string]string{"a.txt": "alpha", "sub/b.txt": "beta", "x.tmp": "skip"})
	photos := writeSource(t, filepath.Join(p.dir, "photos"), map[string]string{"p1.jpg": "jpeg1", "p2.jpg": "jpeg2"})
	home := writeSource(t, filepath.Join(p.dir, "home"), map[string]string{".bashrc": "export X=1"})

	yaml := fmt.Sprintf(`# Cloudstic profiles for this host
version: 1
stores:
  # company bucket
  bucket:
    uri: s3:%s/%s
    s3_endpoint: %s
    s3_region: us-east-1
    s3_access_key_secret: env://BUCKET_AK
    s3_secret_key_secret: env://BUCKET_SK
    password_secret: file://%s
  nas:
    uri: sftp://%s@127.0.0.1:%s%s
    store_sftp_key: %s
    store_sftp_known_hosts: %s
    password_secret: config-token://cloudstic/nas
auth:
  google-work:
    provider: google
    google_token_file: %s/google-token.json
profiles:
  documents:
    source: local:%s
    store: bucket
    tags: [docs, daily]
    excludes:
      - "*.tmp"
  photos:
    source: local:%s
    store: nas
    tags: [photos]
  # no store: CLOUDSTIC_STORE and CLOUDSTIC_PASSWORD_REF apply
  laptop-home:
    source: local:%s
    tags: [home]
  work-drive:
    source: gdrive-changes
    store: bucket
    auth_ref: google-work
    enabled: false
`, s3["S3_TEST_BUCKET"], prefix, s3["S3_TEST_ENDPOINT"], pwFile,
		sf["SFTP_TEST_USER"], sf["SFTP_TEST_PORT"], sftpDir, sf["SFTP_TEST_KEY"], sf["SFTP_TEST_KNOWN_HOSTS"],
		p.cfg, docs, photos, home)
	profilesPath := filepath.Join(p.cfg, "profiles.yaml")
	if err := os.WriteFile(profilesPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}

	p.mustRun(t, "store", "init", "-yes", "bucket")
	p.mustRun(t, "store", "init", "-yes", "nas")
	p.mustRun(t, "init")
	for _, s := range []string{"bucket", "nas"} {
		res := p.mustRun(t, "store", "verify", s)
		if !strings.Contains(res.stdout, "store "+s+": ok") {
			t.Errorf("store verify %s: %v", s, res)
		}
	}

	res := p.run(t, "backup", "-all-profiles", "-json")
	wantCode(t, res, 0)
	var outcomes []struct {
		Profile  string `json:"profile"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
		Result   struct {
			SnapshotID string `json:"snapshot_id"`
			Summary    struct {
				FilesNew int `json:"files_new"`
			} `json:"summary"`
		} `json:"result"`
	}
	decodeJSON(t, res, &outcomes)
	wantFiles := map[string]int{"documents": 2, "laptop-home": 1, "photos": 2}
	if len(outcomes) != 3 {
		t.Fatalf("want 3 profiles run (work-drive is disabled), got %v", res)
	}
	for i, name := range []string{"documents", "laptop-home", "photos"} {
		o := outcomes[i]
		if o.Profile != name || o.ExitCode != 0 || o.Result.SnapshotID == "" || o.Result.Summary.FilesNew != wantFiles[name] {
			t.Errorf("outcome %d = %+v, want %s backed up with %d files", i, o, name, wantFiles[name])
		}
	}
	// Each profile's snapshot is in its own store.
	for name, tag := range map[string]string{"documents": "docs", "photos": "photos", "laptop-home": "home"} {
		res := p.mustRun(t, "list", "-profile", name, "-json")
		var doc struct {
			Snapshots []struct {
				Tags []string `json:"tags"`
			}
		}
		decodeJSON(t, res, &doc)
		snaps := doc.Snapshots
		if len(snaps) != 1 || len(snaps[0].Tags) == 0 || snaps[0].Tags[0] != tag {
			t.Errorf("list -profile %s: %v", name, res)
		}
	}
	// Running profiles never rewrites the user's file.
	if b, err := os.ReadFile(profilesPath); err != nil || string(b) != yaml {
		t.Errorf("profiles.yaml changed by the runs (%v)", err)
	}

	// The cloud-drive profile is kept; run, its auth entry without an
	// OAuth client is a one-line usage error naming the entry and the fix.
	res = p.run(t, "backup", "-profile", "work-drive")
	wantCode(t, res, 2)
	wantOneLineError(t, res, "google-work", "OAuth client", "-google-credentials")

	// One failing profile does not stop the others; the exit code is the
	// worst, and the summary names the failure.
	if err := os.Chmod(pwFile, 0o644); err != nil {
		t.Fatal(err)
	}
	res = p.run(t, "backup", "-all-profiles")
	wantCode(t, res, 1)
	for _, want := range []string{"documents", "failed", "accessible by other users", "photos", "laptop-home"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("summary lacks %q: %v", want, res)
		}
	}
	res = p.mustRun(t, "list", "-profile", "photos", "-json")
	var doc struct{ Snapshots []any }
	decodeJSON(t, res, &doc)
	if len(doc.Snapshots) != 2 {
		t.Errorf("photos has %d snapshots after the second -all-profiles run, want 2", len(doc.Snapshots))
	}
}

// TestStoreVerifyErrors: a wrong password, an unreachable endpoint and a
// missing repository each give their own one-line error.
func TestStoreVerifyErrors(t *testing.T) {
	s3 := needEnv(t, "scripts/s3-server.sh", "S3_TEST_BUCKET", "S3_TEST_ACCESS_KEY_ID", "S3_TEST_SECRET_ACCESS_KEY")
	p := newProfileEnv(t, "RIGHT=right-pass", "WRONG=wrong-pass", "AK="+s3["S3_TEST_ACCESS_KEY_ID"], "SK="+s3["S3_TEST_SECRET_ACCESS_KEY"])
	repo := filepath.Join(p.dir, "repo")
	yaml := fmt.Sprintf(`version: 1
stores:
  good:
    uri: local:%[1]s
    password_secret: env://RIGHT
  wrong-password:
    uri: local:%[1]s
    password_secret: env://WRONG
  unreachable:
    uri: s3:%[2]s/nothing
    s3_endpoint: http://127.0.0.1:1
    s3_access_key_secret: env://AK
    s3_secret_key_secret: env://SK
    password_secret: env://RIGHT
  missing:
    uri: local:%[3]s
    password_secret: env://RIGHT
`, repo, s3["S3_TEST_BUCKET"], filepath.Join(p.dir, "none"))
	if err := os.WriteFile(filepath.Join(p.dir, "profiles.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p.env = append(p.env, "CLOUDSTIC_PROFILES_FILE="+filepath.Join(p.dir, "profiles.yaml"))
	p.mustRun(t, "store", "init", "-yes", "good")
	p.mustRun(t, "store", "verify", "good")
	tests := []struct{ store, want string }{
		{"wrong-password", "wrong password or key"},
		{"unreachable", "cannot reach the store"},
		{"missing", "no repository in the store"},
	}
	for _, tc := range tests {
		t.Run(tc.store, func(t *testing.T) {
			res := p.run(t, "store", "verify", tc.store)
			wantCode(t, res, 1)
			wantOneLineError(t, res, "store "+tc.store, tc.want)
		})
	}
}

// TestPasswordSources: -password-file, -password-command and
// -password-ref open the repository; a -password on the command line works
// but warns, unless -quiet.
func TestPasswordSources(t *testing.T) {
	p := newProfileEnv(t, "PW=the-pass")
	p.env = append(p.env, "CLOUDSTIC_STORE=local:"+filepath.Join(p.dir, "repo"))
	pwFile := filepath.Join(p.dir, "pw")
	if err := os.WriteFile(pwFile, []byte("the-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.mustRun(t, "init", "-password-ref", "env://PW")
	for _, args := range [][]string{
		{"-password-file", pwFile},
		{"-password-command", "cat " + pwFile},
		{"-password-ref", "file://" + pwFile},
	} {
		res := p.run(t, append([]string{"list"}, args...)...)
		if res.code != 0 || strings.Contains(res.stderr, "warning") {
			t.Errorf("list %v: %v", args, res)
		}
	}
	res := p.run(t, "list", "-password-command", "false")
	wantCode(t, res, 1)
	wantOneLineError(t, res, "-password-command failed")
	res = p.run(t, "list", "-password-file", pwFile, "-password-ref", "env://PW")
	wantCode(t, res, 2)

	// The one test that puts a password on a command line: the warning,
	// once, with -verbose (stderr is a pipe here, as in a script, which
	// sees no warning: Cloudstic printed none), and never with -json.
	res = p.run(t, "list", "-verbose", "-password", "the-pass")
	wantCode(t, res, 0)
	if n := strings.Count(res.stderr, "warning: -password on the command line can be read by other users"); n != 1 {
		t.Errorf("-verbose: %d warnings, want 1: %v", n, res)
	}
	for _, args := range [][]string{{"-quiet", "-verbose"}, {"-json", "-verbose"}, {}} {
		res = p.run(t, append(append([]string{"list"}, args...), "-password", "the-pass")...)
		if res.code != 0 || strings.Contains(res.stderr, "warning") {
			t.Errorf("%v: %v", args, res)
		}
	}
}

// TestProfileRetention: keep_* and prune: true in a profile (an extension)
// make `backup -profile` forget and prune that profile's old snapshots,
// and only those.
func TestProfileRetention(t *testing.T) {
	p := newProfileEnv(t, "PW=retention-pass")
	repo := filepath.Join(p.dir, "repo")
	src := writeSource(t, filepath.Join(p.dir, "src"), map[string]string{"a": "1"})
	yaml := fmt.Sprintf(`version: 1
stores:
  disk:
    uri: local:%s
    password_secret: env://PW
profiles:
  docs:
    source: local:%s
    store: disk
    tags: [docs]
    keep_last: 1
    prune: true
`, repo, src)
	if err := os.MkdirAll(p.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.cfg, "profiles.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p.mustRun(t, "store", "init", "-yes", "disk")
	// A snapshot of the same source without the profile's tag is not the
	// profile's to forget.
	p.mustRun(t, "backup", "-source", "local:"+src, "-store", "local:"+repo, "-password-ref", "env://PW")
	p.mustRun(t, "backup", "-profile", "docs")
	res := p.mustRun(t, "backup", "-profile", "docs", "-json")
	var out struct {
		Profile string `json:"profile"`
		Backup  struct {
			SnapshotID string `json:"snapshot_id"`
		} `json:"backup"`
		Forget struct {
			Removed []string       `json:"removed"`
			Prune   map[string]any `json:"prune"`
		} `json:"forget"`
		ExitCode int `json:"exit_code"`
	}
	decodeJSON(t, res, &out)
	if out.Profile != "docs" || out.Backup.SnapshotID == "" || len(out.Forget.Removed) != 1 || out.Forget.Prune == nil || out.ExitCode != 0 {
		t.Errorf("retention run: %+v\n%v", out, res)
	}
	res = p.mustRun(t, "list", "-profile", "docs", "-json")
	type listed struct {
		Snapshots []struct {
			ID   string   `json:"id"`
			Tags []string `json:"tags"`
		}
	}
	var doc listed
	decodeJSON(t, res, &doc)
	snaps := doc.Snapshots
	if len(snaps) != 2 || len(snaps[0].Tags) != 0 || snaps[1].ID != out.Backup.SnapshotID {
		t.Errorf("want the untagged snapshot and the newest profile snapshot, got %+v", snaps)
	}
	// -dry-run stores nothing and forgets nothing.
	p.mustRun(t, "backup", "-profile", "docs", "-dry-run")
	res = p.mustRun(t, "list", "-profile", "docs", "-json")
	doc = listed{}
	decodeJSON(t, res, &doc)
	snaps = doc.Snapshots
	if len(snaps) != 2 {
		t.Errorf("after -dry-run: %+v", snaps)
	}
	// With -host the retention applies to the snapshots of that host name:
	// the second run forgets the first, and this machine's stay.
	p.mustRun(t, "backup", "-profile", "docs", "-host", "elsewhere")
	decodeJSON(t, p.mustRun(t, "backup", "-profile", "docs", "-host", "elsewhere", "-json"), &out)
	if len(out.Forget.Removed) != 1 {
		t.Errorf("retention with -host elsewhere removed %v, want the first elsewhere snapshot", out.Forget.Removed)
	}
	doc = listed{}
	decodeJSON(t, p.mustRun(t, "list", "-profile", "docs", "-json"), &doc)
	snaps = doc.Snapshots
	if len(snaps) != 3 {
		t.Errorf("after the -host runs: %+v, want the untagged, this host's and elsewhere's newest", snaps)
	}
}

// TestProfilesFileErrors: a broken profiles.yaml is refused with the file,
// the line and the key; a missing one lists nothing.
func TestProfilesFileErrors(t *testing.T) {
	p := newProfileEnv(t)
	res := p.mustRun(t, "profile", "list")
	if res.stdout != "" {
		t.Errorf("profile list without a file printed %q", res.stdout)
	}
	path := filepath.Join(p.cfg, "profiles.yaml")
	if err := os.MkdirAll(p.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("version: 1\nprofiles:\n  docs:\n    source: local:/x\n    tag: [a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = p.run(t, "backup", "-profile", "docs")
	wantCode(t, res, 1)
	wantOneLineError(t, res, path+":5: profiles.docs.tag: unknown key (did you mean tags?)")
	res = p.run(t, "profile", "new", "-name", "x", "-no-prompt")
	wantCode(t, res, 2)
	wantOneLineError(t, res, "-source is required")
}
