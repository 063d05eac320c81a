package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cloudsticFile is a profiles.yaml as a Cloudstic user writes it, with
// comments, a cloud-drive profile and an auth entry.
const cloudsticFile = `# fleet backups
version: 1
stores:
  # the NAS
  nas:
    uri: sftp://backup@nas.example.com/backups/cloudstic
    store_sftp_key: /home/me/.ssh/id_backup
    password_secret: file:///etc/cloudstic/nas.pw
  bucket:
    uri: s3:company-backups/laptops
    s3_region: eu-west-1
    s3_access_key_secret: env://BUCKET_AK
    s3_secret_key_secret: env://BUCKET_SK
    password_secret: secret-service://cloudstic/bucket-password
auth:
  google-work:
    provider: google
    google_token_file: /home/me/.config/cloudstic/google.json
profiles:
  documents:
    source: local:/home/me/Documents
    store: nas
    tags: [docs, daily]
    excludes:
      - "*.tmp"
      - .cache/
  drive:
    source: gdrive-changes
    store: bucket
    auth_ref: google-work
    enabled: false
`

func TestParseCloudsticFile(t *testing.T) {
	f, err := Parse("profiles.yaml", []byte(cloudsticFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.ProfileNames(), ","); got != "documents,drive" {
		t.Errorf("profiles %s", got)
	}
	doc := f.Profiles["documents"]
	if doc.Store != "nas" || len(doc.Tags) != 2 || doc.Excludes[1] != ".cache/" || !doc.IsEnabled() || doc.CloudDrive() {
		t.Errorf("documents = %+v", doc)
	}
	if d := f.Profiles["drive"]; d.IsEnabled() || !d.CloudDrive() {
		t.Errorf("drive = %+v", d)
	}
	if f.Stores["bucket"].S3Region != "eu-west-1" || f.Auth["google-work"].Provider != "google" {
		t.Errorf("stores %+v auth %+v", f.Stores, f.Auth)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		key        string
	}{
		{"unknown top key", "version: 1\nstore:\n  a:\n    uri: local:/x\n", 2, "store"},
		{"unknown store key", "stores:\n  a:\n    uri: local:/x\n    s3_regin: x\n", 4, "stores.a.s3_regin"},
		{"bad store name", "stores:\n  -bad:\n    uri: local:/x\n", 2, "stores.-bad"},
		{"bad profile name", "profiles:\n  my docs:\n    source: local:/x\n", 2, "profiles.my docs"},
		{"wrong type", "profiles:\n  a:\n    source: local:/x\n    tags: {x: 1}\n", 4, "profiles.a.tags"},
		{"unknown store ref", "profiles:\n  a:\n    source: local:/x\n    store: nope\n", 4, "profiles.a.store"},
		{"bad secret ref", "stores:\n  a:\n    uri: local:/x\n    password_secret: vault://x\n", 4, "stores.a.password_secret"},
		{"bad version", "version: 7\n", 1, "version"},
		{"duplicate", "profiles:\n  a:\n    source: local:/x\n  a:\n    source: local:/y\n", 4, "profiles.a"},
		{"no uri", "stores:\n  a:\n    s3_region: x\n", 2, "stores.a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("/etc/p.yaml", []byte(tc.yaml))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a *Error", err)
			}
			if e.Line != tc.line || e.Key != tc.key || e.File != "/etc/p.yaml" {
				t.Errorf("got %s, want line %d key %s", err, tc.line, tc.key)
			}
			if !strings.HasPrefix(err.Error(), "/etc/p.yaml:") {
				t.Errorf("message %q does not start with the file", err)
			}
		})
	}
}

func TestRewriteKeepsCommentsOrderAndCloudFields(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "profiles.yaml")
	if err := os.WriteFile(path, []byte(cloudsticFile), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AddStore("usb", Store{URI: "local:/mnt/usb/repo"}); err != nil {
		t.Fatal(err)
	}
	if err := f.AddProfile("photos", Profile{Source: "local:/home/me/Photos", Store: "usb", Tags: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.AddProfile("documents", Profile{Source: "local:/x"}); !errors.Is(err, ErrExists) {
		t.Errorf("adding an existing profile: %v", err)
	}
	if err := f.AddProfile("x", Profile{Source: "local:/x", Store: "nope"}); !errors.Is(err, ErrUnknownStore) {
		t.Errorf("adding a profile with an unknown store: %v", err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(path)
	out := string(b)
	for _, want := range []string{"# fleet backups", "# the NAS", "google_token_file:", "auth_ref: google-work", "enabled: false", "usb:", "photos:"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, out)
		}
	}
	// Order: existing entries first, as written; new ones at the end of
	// their section.
	order := []string{"nas:", "bucket:", "usb:", "auth:", "documents:", "drive:", "photos:"}
	last := -1
	for _, k := range order {
		i := strings.Index(out, k)
		if i < last {
			t.Errorf("%s out of order:\n%s", k, out)
		}
		last = i
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Profiles["photos"].Store != "usb" || g.Profiles["drive"].AuthRef != "google-work" {
		t.Errorf("reloaded %+v", g.Profiles)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "profiles.yaml")
	f := Empty(path)
	if err := f.AddStore("a", Store{URI: "local:/r"}); err != nil {
		t.Fatal(err)
	}
	if err := f.AddStore("bad name", Store{URI: "local:/r"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad name: %v", err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil || g.Version != 1 || g.Stores["a"].URI != "local:/r" {
		t.Fatalf("%+v %v", g, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestProfilesPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		explicit string
		env      map[string]string
		want     string
	}{
		{"/x.yaml", map[string]string{"CLOUDSTIC_PROFILES_FILE": "/y.yaml"}, "/x.yaml"},
		{"", map[string]string{"CLOUDSTIC_PROFILES_FILE": "/y.yaml", "CLOUDSTIC_CONFIG_DIR": "/c"}, "/y.yaml"},
		{"", map[string]string{"CLOUDSTIC_CONFIG_DIR": "/c", "HOME": "/h"}, "/c/profiles.yaml"},
		{"", map[string]string{"HOME": "/h"}, "/h/.config/cloudstic/profiles.yaml"},
		{"", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/xdg"}, "/xdg/cloudstic/profiles.yaml"},
	}
	for _, tc := range tests {
		got, err := ProfilesPath(tc.explicit, env(tc.env))
		if err != nil || got != tc.want {
			t.Errorf("ProfilesPath(%q, %v) = %q, %v; want %q", tc.explicit, tc.env, got, err, tc.want)
		}
	}
	if _, err := ProfilesPath("", env(nil)); !errors.Is(err, ErrNoConfigDir) {
		t.Errorf("no home: %v", err)
	}
}

// literalFile holds an SFTP password and an S3 secret key in clear, and a
// reference.
const literalFile = `version: 1
stores:
  nas:
    uri: sftp://backup@nas/x
    store_sftp_password: hunter2
    password_secret: env://NAS_PW
  bucket:
    uri: s3:b/x
    s3_access_key: AKIAEXAMPLE
    s3_secret_key: wJalrXUtnFEMI
`
