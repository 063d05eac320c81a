package cli_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestJSONMatchesDocs runs every command with -json, on a local repository
// taken through backups, key changes, forget, prune, damage and broken
// locks, and checks each document against the schema docs/cli.md
// publishes for it: no field missing, none undocumented, every type as
// documented. Each documented field must also show up at least once, so
// a field documented but never printed (or renamed) fails too.
func TestJSONMatchesDocs(t *testing.T) {
	t.Parallel()
	schemas := docSchemas(t)
	c := &schemaChecker{defs: schemas, seen: map[string]bool{}}
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	src := filepath.Join(dir, "src")
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + repoDir, "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	checked := map[string]bool{}
	// run runs one command and checks its stdout against schema name.
	run := func(name string, code int, args ...string) string {
		t.Helper()
		o := mainWith(t, env, args...)
		if o.code != code {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), o.code, code, o.stdout, o.stderr)
		}
		s := schemas[name]
		if s == nil {
			t.Fatalf("docs/cli.md documents no %q document", name)
		}
		for _, e := range c.check(name, s, []byte(o.stdout)) {
			t.Errorf("%s: %s", strings.Join(args, " "), e)
		}
		checked[name] = true
		return o.stdout
	}

	run("version", cli.ExitOK, "version", "-json")
	run("completion", cli.ExitOK, "completion", "bash", "-json")
	run("error", cli.ExitError, "list", "-json")
	run("init", cli.ExitOK, "init", "-json", "-add-recovery-key")
	run("init", cli.ExitOK, "init", "-json", "-adopt-slots")

	mustWrite(t, filepath.Join(src, "a.txt"), "first\n")
	mustWrite(t, filepath.Join(src, "sub", "b.txt"), "second\n")
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	first := jsonField(t, run("backup", cli.ExitOK, "backup", "-json", "-source", "local:"+src, "-tag", "one"), "snapshot_id")
	mustWrite(t, filepath.Join(src, "a.txt"), "first, changed\n")
	mustWrite(t, filepath.Join(src, "c.txt"), "third\n")
	second := jsonField(t, run("backup", cli.ExitOK, "backup", "-json", "-source", "local:"+src), "snapshot_id")
	run("backup", cli.ExitOK, "backup", "-json", "-dry-run", "-source", "local:"+src)
	run("backup", cli.ExitOK, "backup", "-json", "-ignore-empty-snapshot", "-source", "local:"+src)
	mustWrite(t, filepath.Join(src, "d.txt"), "fourth\n")
	run("backup", cli.ExitOK, "backup", "-json", "-source", "local:"+src)

	run("list", cli.ExitOK, "list", "-json")
	run("ls", cli.ExitOK, "ls", "-json", "latest")
	run("diff", cli.ExitOK, "diff", "-json", first, second)
	run("find", cli.ExitOK, "find", "-json", "*.txt")
	run("find", cli.ExitOK, "find", "-json", "-i", "-newer", "2000-01-01", "-older", "2100-01-01", "-size", "6",
		"-path-prefix", "/", "-snapshot", "latest", "/*.TXT")
	run("cat snapshot", cli.ExitOK, "cat", "snapshot", "latest")
	run("cat -json", cli.ExitOK, "cat", "-json", "config", "snapshot", "latest")
	run("stats", cli.ExitOK, "stats", "-json", "-mode", "raw-data")
	run("stats -growth", cli.ExitOK, "stats", "-json", "-growth")
	run("restore", cli.ExitOK, "restore", "-json", "latest", "-output", filepath.Join(dir, "restored"))
	mustWrite(t, filepath.Join(dir, "restored", "extra.txt"), "not in the snapshot\n")
	run("restore", cli.ExitOK, "restore", "-json", "-dry-run", "-delete", "latest", "-output", filepath.Join(dir, "restored"))

	// profiles.yaml: a store entry for this repository and a profile on it.
	env["CLOUDSTIC_PROFILES_FILE"] = filepath.Join(dir, "profiles.yaml")
	run("store new", cli.ExitOK, "store", "new", "-json", "-no-prompt", "-name", "main", "-uri", "local:"+repoDir)
	run("profile new", cli.ExitOK, "profile", "new", "-json", "-no-prompt", "-name", "docs", "-source", "local:"+src, "-store-ref", "main")
	run("profile list", cli.ExitOK, "profile", "list", "-json")
	run("profile show", cli.ExitOK, "profile", "show", "-json", "docs")
	run("store list", cli.ExitOK, "store", "list", "-json")
	run("store show", cli.ExitOK, "store", "show", "-json", "main")
	run("store verify", cli.ExitOK, "store", "verify", "-json", "main")
	mustWrite(t, filepath.Join(dir, "Documents", "a.txt"), "x\n") // HOME is dir: a usual folder to propose
	run("setup workstation", cli.ExitOK, "setup", "workstation", "-json", "-dry-run", "-store-ref", "main")
	run("source discover", cli.ExitOK, "source", "discover", "-json")
	// A profile and a store entry with every key (PROFILE, STORE).
	full := filepath.Join(dir, "full.yaml")
	mustWrite(t, full, fullProfilesFile())
	run("profile show", cli.ExitOK, "profile", "show", "-json", "-profiles-file", full, "full")
	run("store show", cli.ExitOK, "store", "show", "-json", "-profiles-file", full, "full")

	run("key change", cli.ExitOK, "key", "add", "-json", "-label", "second", "-new-password", "pw2")
	run("key change", cli.ExitOK, "key", "add-recovery", "-json")
	run("key change", cli.ExitOK, "key", "passwd", "-json", "-new-password", "pw3")
	env["CLOUDSTIC_PASSWORD"] = "pw3"
	run("key change", cli.ExitOK, "key", "remove", "-json", "second")

	run("tag", cli.ExitOK, "tag", "-json", "-dry-run", "-add", "two", "-tag", "one")
	run("tag", cli.ExitOK, "tag", "-json", "-add", "two", first)
	// copy into a second repository: a dry run, the copy, and a second
	// run that skips everything.
	copyDst := "local:" + filepath.Join(dir, "copy")
	if o := mainWith(t, env, "init", "-store", copyDst); o.code != cli.ExitOK {
		t.Fatalf("init %s: %s", copyDst, o.stderr)
	}
	env["CLOUDSTIC_FROM_STORE"], env["CLOUDSTIC_FROM_PASSWORD"] = "local:"+repoDir, env["CLOUDSTIC_PASSWORD"]
	run("copy", cli.ExitOK, "copy", "-json", "-dry-run", "-store", copyDst)
	run("copy", cli.ExitOK, "copy", "-json", "-store", copyDst)
	run("copy", cli.ExitOK, "copy", "-json", "-store", copyDst, "-tag", "two")
	run("rewrite", cli.ExitOK, "rewrite", "-json", "-dry-run", "-exclude", "sub/")
	run("rewrite", cli.ExitOK, "rewrite", "-json", "-exclude", "c.txt", "latest")

	// A junk snapshot, index file and pack (each named by the hash of its
	// bytes) in both repositories: the commands skip and list them, the
	// repairs remove them (the pack stays, unreadable, until prune).
	for _, d := range []string{repoDir, filepath.Join(dir, "copy")} {
		for _, prefix := range []string{"snapshots", "index/packs", "data/"} {
			plantJunk(t, d, prefix)
		}
	}
	run("backup", cli.ExitOK, "backup", "-json", "-source", "local:"+src)
	run("ls", cli.ExitOK, "ls", "-json", "latest")
	run("diff", cli.ExitOK, "diff", "-json", "latest")
	run("stats", cli.ExitOK, "stats", "-json")
	run("restore", cli.ExitOK, "restore", "-json", "latest", "-output", filepath.Join(dir, "restored-damaged"))
	run("tag", cli.ExitOK, "tag", "-json", "-add", "three", "latest")
	run("copy", cli.ExitOK, "copy", "-json", "-store", copyDst)
	run("rewrite", cli.ExitOK, "rewrite", "-json", "-exclude", "nothing-matches", "latest")
	run("forget", cli.ExitOK, "forget", "-json", "-dry-run", "-keep-last", "9")
	run("repair index", cli.ExitOK, "repair", "index", "-json", "-dry-run")
	run("repair index", cli.ExitOK, "repair", "index", "-json")
	run("repair snapshots", cli.ExitOK, "repair", "snapshots", "-json", "-dry-run")
	run("repair snapshots", cli.ExitOK, "repair", "snapshots", "-json")
	run("repair config", cli.ExitOK, "repair", "config", "-json", "-dry-run")
	run("repair config", cli.ExitOK, "repair", "config", "-json")
	run("forget", cli.ExitOK, "forget", "-json", "-dry-run", "-keep-last", "1", "-group-by", "tags")
	run("forget", cli.ExitOK, "forget", "-json", "-keep-last", "2", "-prune")
	run("forget", cli.ExitOK, "forget", "-json", "-keep-last", "1")
	run("prune", cli.ExitOK, "prune", "-json", "-dry-run", "-margin", "0")
	run("prune", cli.ExitOK, "prune", "-json", "-margin", "0")
	run("check", cli.ExitOK, "check", "-json", "-read-data")

	// A held shared lock and an unreadable exclusive one, listed and then
	// broken.
	held, err := lock.AcquireShared(context.Background(), local.New(repoDir), "schema-test", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release(context.Background()) }() // break-lock removed it already
	// The lock blocks forget's prune step: "prune_error".
	run("forget", cli.ExitError, "forget", "-json", "-keep-last", "1", "-prune")
	mustWrite(t, filepath.Join(repoDir, "index", "lock.exclusive"), "not a lock")
	run("locks", cli.ExitOK, "locks", "-json")
	run("break-lock", cli.ExitOK, "break-lock", "-json")

	// Without its index every blob is missing (errors) and every pack a
	// leftover (notes).
	if err := os.RemoveAll(filepath.Join(repoDir, "index", "packs")); err != nil {
		t.Fatal(err)
	}
	run("check", cli.ExitError, "check", "-json")

	// An unreadable key slot.
	mustWrite(t, filepath.Join(repoDir, "keys", "00000000deadbeef"), "not a key slot")
	run("key list", cli.ExitOK, "key", "list", "-json")

	// The snapshot of an empty directory lists no entries: [], not null.
	env["CLOUDSTIC_STORE"] = "local:" + filepath.Join(dir, "repo2")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	run("init", cli.ExitOK, "init", "-json")
	run("backup", cli.ExitOK, "backup", "-json", "-source", "local:"+empty)
	if out := run("ls", cli.ExitOK, "ls", "-json", "latest"); !strings.Contains(out, `"entries": []`) {
		t.Errorf("ls -json of an empty snapshot: %s, want entries []", out)
	}

	for name, s := range schemas {
		if !checked[name] && strings.ToUpper(name) != name { // upper case: a definition
			t.Errorf("docs/cli.md documents %q, which this test does not run", name)
			continue
		}
		for _, p := range c.fieldPaths(name, s) {
			if !c.seen[p] && !needsKMS[p] {
				t.Errorf("docs/cli.md documents %s, which no command printed", p)
			}
		}
	}
	if t.Failed() {
		t.Logf("fields seen: %s", strings.Join(slices.Sorted(maps.Keys(c.seen)), " "))
	}
}

// plantJunk writes random bytes into the repository in dir, under prefix
// ("data/" gets a two-digit directory), named by their SHA-256.
func plantJunk(t *testing.T, dir, prefix string) {
	t.Helper()
	junk := make([]byte, 300)
	if _, err := rand.Read(junk); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%x", sha256.Sum256(junk))
	if prefix == "data/" {
		prefix += name[:2]
	}
	mustWrite(t, filepath.Join(dir, filepath.FromSlash(prefix), name), string(junk))
}

// needsKMS lists the fields only a kms-platform key slot prints; this test
// runs no KMS server (test/e2e/kms_test.go does).
var needsKMS = map[string]bool{
	"key list[].kms_key_arn":         true,
	"key change.added.kms_key_arn":   true,
	"key change.changed.kms_key_arn": true,
	"key change.removed.kms_key_arn": true,
}

// jsonField returns a top-level string field of a JSON object.
func jsonField(t *testing.T, doc, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	s, _ := m[field].(string) // a missing field is caught below
	if s == "" {
		t.Fatalf("no %q in %s", field, doc)
	}
	return s
}

// fullProfilesFile is a profiles file whose store and profile "full" set
// every key there is.
func fullProfilesFile() string {
	var b strings.Builder
	b.WriteString("version: 1\nstores:\n  full:\n")
	for _, t := range config.StoreSettings {
		if t.Key != "" {
			fmt.Fprintf(&b, "    %s: /some/value\n", t.Key)
		}
		if t.RefKey != "" {
			fmt.Fprintf(&b, "    %s: env://SOME_VAR\n", t.RefKey)
		}
	}
	b.WriteString(`auth:
  g:
    provider: google
profiles:
  full:
    source: local:/x
    store: full
    auth_ref: g
    tags: [a]
    excludes: ["*.tmp"]
    exclude_file: /e
    ignore_empty: true
    volume_uuid: u
    enabled: false
    skip_native_files: true
    google_credentials: /c
    google_credentials_ref: env://GC
    google_credentials_json: "{}"
    google_token_file: /t
    google_token_ref: env://GT
    onedrive_client_id: id
    onedrive_token_file: /o
    onedrive_token_ref: env://OT
    keep_last: 1
    keep_hourly: 1
    keep_daily: 1
    keep_weekly: 1
    keep_monthly: 1
    keep_yearly: 1
    prune: true
`)
	return b.String()
}
