//go:build unix

package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
	"github.com/cloudstic/cloudstic/test/fakecloud"
)

// cloudEnv is the environment pointing the CLI at the fake cloud server,
// with a config directory of the test's own.
func cloudEnv(t *testing.T, c *fakecloud.Client) (runOpts, string) {
	t.Helper()
	cfg := t.TempDir()
	return runOpts{env: []string{"CLOUDSTIC_CONFIG_DIR=" + cfg,
		"CLOUDSTIC_GOOGLE_API_URL=" + c.DriveEndpoint(), "CLOUDSTIC_GOOGLE_OAUTH_URL=" + c.OAuthURL(),
		"CLOUDSTIC_ONEDRIVE_API_URL=" + c.GraphEndpoint(), "CLOUDSTIC_ONEDRIVE_OAUTH_URL=" + c.OAuthURL()}}, cfg
}

// TestCloudDriveBackup: without an auth entry a gdrive backup fails in
// one line naming auth new and auth login; auth new and auth login
// (device code, against the fake) store the token through a secret
// reference only; a gdrive-changes backup stores the drive; after two
// files changed, the next one reads the change feed and downloads only
// those two (counted on the fake: no listing, two downloads, their bytes);
// the restore is byte-identical, with the Google document exported, the
// shortcut a link and both files of one name kept; check -read-data is
// clean.
func TestCloudDriveBackup(t *testing.T) {
	ctx := context.Background()
	c := sourcetest.NewTenant(t)
	o, cfg := cloudEnv(t, c)
	r := newLocalRepo(t)

	put := func(it fakecloud.Item) fakecloud.Item {
		t.Helper()
		out, err := c.Put(ctx, it)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	work := put(fakecloud.Item{Name: "Work", Dir: true})
	sub := put(fakecloud.Item{Name: "sub", Dir: true, Parent: work.ID})
	big := bytes.Repeat([]byte("large file "), 200000)
	a := put(fakecloud.Item{Name: "a.txt", Parent: work.ID, Data: []byte("alpha")})
	put(fakecloud.Item{Name: "b.txt", Parent: sub.ID, Data: []byte("bravo")})
	put(fakecloud.Item{Name: "big.bin", Parent: work.ID, Data: big})
	put(fakecloud.Item{Name: "Notes", Parent: work.ID, MIME: "application/vnd.google-apps.document", Data: []byte("docx bytes")})
	put(fakecloud.Item{Name: "to-a", Parent: sub.ID, MIME: "application/vnd.google-apps.shortcut", Target: a.ID})
	d1 := put(fakecloud.Item{Name: "dup.txt", Parent: work.ID, Data: []byte("one")})
	d2 := put(fakecloud.Item{Name: "dup.txt", Parent: work.ID, Data: []byte("two")})

	res := runWith(t, o, r.with("backup", "-source", "gdrive")...)
	if res.code == 0 {
		t.Fatalf("backup without an auth entry succeeded: %v", res)
	}
	wantOneLineError(t, res, "auth new", "auth login")

	creds := filepath.Join(t.TempDir(), "client.json")
	if err := os.WriteFile(creds, []byte(`{"installed":{"client_id":"`+c.Tenant.Name+`","client_secret":"s"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runWith(t, o, "auth", "new", "-name", "work", "-provider", "google", "-google-credentials", creds); res.code != 0 {
		t.Fatal(res)
	}
	res = runWith(t, o, "auth", "login", "-device", "work")
	if res.code != 0 || !strings.Contains(res.stdout, c.Tenant.Name+"@example.com") || !strings.Contains(res.stderr, "enter the code") {
		t.Fatalf("auth login -device: %v", res)
	}
	yml, err := os.ReadFile(filepath.Join(cfg, "profiles.yaml"))
	if err != nil || !strings.Contains(string(yml), "config-token://google/work") || strings.Contains(string(yml), "rt-") {
		t.Fatalf("profiles.yaml should name the token's reference, never hold it:\n%s (%v)", yml, err)
	}

	backup := func() backupOut {
		t.Helper()
		res := runWith(t, o, r.with("backup", "-json", "-auth-ref", "work", "-source", "gdrive-changes:/Work")...)
		var out backupOut
		decodeJSON(t, res, &out)
		if res.code != 0 || out.Errors != 0 {
			t.Fatalf("backup: %v", res)
		}
		return out
	}
	first := backup()

	if err := c.Patch(ctx, a.ID, map[string]any{"data": []byte("alpha, edited")}); err != nil {
		t.Fatal(err)
	}
	put(fakecloud.Item{Name: "c.txt", Parent: sub.ID, Data: []byte("charlie")})
	if err := c.ResetStats(ctx); err != nil {
		t.Fatal(err)
	}
	second := backup()
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.Parent != first.SnapshotID {
		t.Errorf("second backup's parent %s, want %s", second.Parent, first.SnapshotID)
	}
	// The one item listed is the folder Work, looked up by name; a full
	// scan would list all ten.
	if st.Downloads != 2 || st.BytesServed != int64(len("alpha, edited")+len("charlie")) || st.ByPath["/drive/v3/changes"] != 1 || st.ItemsListed != 1 {
		t.Errorf("incremental backup: %d downloads, %d bytes, %d items listed, requests %v; want 2 downloads of the changed files, one change feed read and no listing",
			st.Downloads, st.BytesServed, st.ItemsListed, st.ByPath)
	}

	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", second.SnapshotID, "-output", out)...)
	want := map[string]string{"a.txt": "alpha, edited", "sub/b.txt": "bravo", "sub/c.txt": "charlie", "big.bin": string(big),
		"Notes.docx": "docx bytes", "dup (" + d1.ID + ").txt": "one", "dup (" + d2.ID + ").txt": "two"}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || string(got) != w {
			t.Errorf("%s restored as %d bytes (%v), want %d", name, len(got), err, len(w))
		}
	}
	if target, err := os.Readlink(filepath.Join(out, "sub", "to-a")); err != nil || target != "../a.txt" {
		t.Errorf("shortcut restored as link to %q (%v), want ../a.txt", target, err)
	}
	mustRun(t, r.with("check", "-read-data")...)
}

// TestCloudOneDriveBackup: an auth entry keeping its token in a file
// (written 0600, its contents never printed by auth login or auth show);
// a onedrive-changes backup of a folder; after the change feed's tokens
// expired the next backup lists the whole drive, says so on stderr, and
// still downloads only the changed file (the drive's checksum matches the
// parent's for the others); the one after reads the feed again, and a
// rename and a delete show up in its snapshot; the restore is
// byte-identical.
func TestCloudOneDriveBackup(t *testing.T) {
	ctx := context.Background()
	c := sourcetest.NewTenant(t)
	o, _ := cloudEnv(t, c)
	r := newLocalRepo(t)

	put := func(it fakecloud.Item) fakecloud.Item {
		t.Helper()
		out, err := c.Put(ctx, it)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	docs := put(fakecloud.Item{Name: "Documents", Dir: true})
	put(fakecloud.Item{Name: "elsewhere.txt", Data: []byte("not backed up")})
	x := put(fakecloud.Item{Name: "x.txt", Parent: docs.ID, Data: []byte("x-ray")})
	y := put(fakecloud.Item{Name: "y.txt", Parent: docs.ID, Data: []byte("yankee")})
	z := put(fakecloud.Item{Name: "z.txt", Parent: docs.ID, Data: []byte("zulu")})

	tokFile := filepath.Join(t.TempDir(), "tokens", "ms.json")
	if res := runWith(t, o, "auth", "new", "-name", "ms", "-provider", "onedrive", "-onedrive-client-id", c.Tenant.Name,
		"-onedrive-token-file", tokFile); res.code != 0 {
		t.Fatal(res)
	}
	login := runWith(t, o, "auth", "login", "-device", "-name", "ms")
	if login.code != 0 || !strings.Contains(login.stdout, c.Tenant.Name+"@example.com") {
		t.Fatalf("auth login -device: %v", login)
	}
	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v (%v), want mode 0600", fi, err)
	}
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	show := runWith(t, o, "auth", "show", "ms")
	if show.code != 0 || !regexp.MustCompile(`(?m)^logged in: +yes$`).MatchString(show.stdout) {
		t.Errorf("auth show: %v", show)
	}
	for _, res := range []result{login, show} {
		if secret := strings.TrimSpace(string(tok)); strings.Contains(res.stdout+res.stderr, secret) {
			t.Errorf("%v printed the token", res.args)
		}
	}

	backup := func() (backupOut, result) {
		t.Helper()
		res := runWith(t, o, r.with("backup", "-json", "-auth-ref", "ms", "-source", "onedrive-changes:/Documents")...)
		var out backupOut
		decodeJSON(t, res, &out)
		if res.code != 0 || out.Errors != 0 {
			t.Fatalf("backup: %v", res)
		}
		return out, res
	}
	first, _ := backup()

	if err := c.Patch(ctx, x.ID, map[string]any{"data": []byte("x-ray, edited")}); err != nil {
		t.Fatal(err)
	}
	if err := c.ExpireTokens(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ResetStats(ctx); err != nil {
		t.Fatal(err)
	}
	second, res := backup()
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.Parent != first.SnapshotID || !strings.Contains(res.stderr, "listed the whole drive") {
		t.Errorf("backup after the tokens expired: parent %s (want %s), stderr %q; want a warning of a full listing",
			second.Parent, first.SnapshotID, res.stderr)
	}
	if st.Downloads != 1 || st.BytesServed != int64(len("x-ray, edited")) {
		t.Errorf("full listing: %d downloads, %d bytes; want only the changed file downloaded", st.Downloads, st.BytesServed)
	}

	if err := c.Patch(ctx, y.ID, map[string]any{"name": "yankee.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, z.ID); err != nil {
		t.Fatal(err)
	}
	third, res := backup()
	if third.Parent != second.SnapshotID || strings.Contains(res.stderr, "whole drive") {
		t.Errorf("third backup: parent %s (want %s), stderr %q; want the change feed read", third.Parent, second.SnapshotID, res.stderr)
	}

	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, r.with("restore", third.SnapshotID, "-output", out)...)
	got := map[string]string{}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	want := map[string]string{"x.txt": "x-ray, edited", "yankee.txt": "yankee"}
	if len(got) != len(want) || got["x.txt"] != want["x.txt"] || got["yankee.txt"] != want["yankee.txt"] {
		t.Errorf("restored %v, want %v", got, want)
	}
	mustRun(t, r.with("check", "-read-data")...)

	// forget -source takes the URI as backup does: the trailing slash
	// and all, it names the snapshots recorded as onedrive-changes:/Documents.
	mustRun(t, r.with("forget", "-source", "onedrive-changes:/Documents/", "-keep-last", "1")...)
	var doc struct{ Snapshots []listEntry }
	decodeJSON(t, mustRun(t, r.with("list", "-json")...), &doc)
	snaps := doc.Snapshots
	if len(snaps) != 1 || snaps[0].ID != third.SnapshotID {
		t.Errorf("after forget -keep-last 1: %v, want only %s", snaps, third.SnapshotID)
	}
}
