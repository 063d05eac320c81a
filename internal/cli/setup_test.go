package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/config"
)

// setupHome makes a home with XDG user dirs (Documents renamed, Music
// disabled, Pictures with a space, no Videos folder) and a profiles file
// that has a desktop profile and a store main.
func setupHome(t *testing.T) (env map[string]string, home, profiles string) {
	t.Helper()
	dir := t.TempDir()
	home = filepath.Join(dir, "home")
	for _, d := range []string{"Docs", "Desktop", "My Pictures", "Music", ".config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(home, ".config", "user-dirs.dirs"), "# written by xdg-user-dirs-update\n"+
		"XDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_DOCUMENTS_DIR=\"$HOME/Docs\"\nXDG_MUSIC_DIR=\"$HOME/\"\n"+
		"XDG_PICTURES_DIR=\"$HOME/My Pictures\"\nXDG_VIDEOS_DIR=\"$HOME/Videos\"\n")
	profiles = filepath.Join(dir, "profiles.yaml")
	mustWrite(t, profiles, "version: 1\nstores:\n  main:\n    uri: local:"+filepath.Join(dir, "repo")+"\nprofiles:\n  desktop:\n    source: local:/elsewhere\n    store: main\n")
	env = map[string]string{"HOME": home, "CLOUDSTIC_PROFILES_FILE": profiles, "CLOUDSTIC_CONFIG_DIR": filepath.Join(dir, "cfg")}
	return env, home, profiles
}

// setupEntry is one profile of setup workstation -json's plan.
type setupEntry struct {
	Action  string         `json:"action"`
	Kind    string         `json:"kind"`
	Name    string         `json:"name"`
	Profile config.Profile `json:"profile"`
	Reason  string         `json:"reason"`
}

// folderEntries decodes the plan and keeps its folder proposals (the
// machine's portable drives, if any, vary).
func folderEntries(t *testing.T, out string) (plan map[string]any, folders []setupEntry) {
	t.Helper()
	var p struct {
		Profiles []setupEntry `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Profiles {
		if e.Kind == "folder" {
			folders = append(folders, e)
		}
	}
	return plan, folders
}

// TestSetupWorkstationPlan: -dry-run -json on a home with XDG dirs
// proposes the existing XDG folders ($HOME substituted, a disabled one
// and a missing one left out), skips the name the file already has, and
// writes nothing; -yes then writes profiles that load, the existing one
// untouched.
func TestSetupWorkstationPlan(t *testing.T) {
	env, home, profiles := setupHome(t)
	before, err := os.ReadFile(profiles)
	if err != nil {
		t.Fatal(err)
	}
	o := mainWith(t, env, "setup", "workstation", "-dry-run", "-json", "-store-ref", "main")
	if o.code != cli.ExitOK {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	plan, folders := folderEntries(t, o.stdout)
	want := []setupEntry{
		{Action: "create", Kind: "folder", Name: "documents", Profile: config.Profile{Source: "local:" + filepath.Join(home, "Docs"), Store: "main"}},
		{Action: "skip", Kind: "folder", Name: "desktop", Profile: config.Profile{Source: "local:" + filepath.Join(home, "Desktop"), Store: "main"},
			Reason: profiles + " already has a profile desktop (source local:/elsewhere): left as it is"},
		{Action: "create", Kind: "folder", Name: "pictures", Profile: config.Profile{Source: "local:" + filepath.Join(home, "My Pictures"), Store: "main"}},
	}
	if !reflect.DeepEqual(folders, want) {
		t.Errorf("folders\n got %+v\nwant %+v", folders, want)
	}
	if plan["dry_run"] != true || plan["written"] != false || plan["file"] != profiles || plan["store_ref"] != "main" {
		t.Errorf("plan %v: want dry_run, not written, file %s, store_ref main", plan, profiles)
	}
	if after, _ := os.ReadFile(profiles); string(after) != string(before) {
		t.Fatalf("-dry-run changed %s:\n%s", profiles, after)
	}

	o = mainWith(t, env, "setup", "workstation", "-yes", "-store-ref", "main")
	o.check(t, cli.ExitOK, []string{"create", "documents", "skip", "desktop", "Wrote the new profiles"}, nil)
	f, err := config.Load(profiles)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"documents": filepath.Join(home, "Docs"), "pictures": filepath.Join(home, "My Pictures"), "desktop": "/elsewhere"} {
		if p, err := f.Profile(name); err != nil || p.Source != "local:"+src || p.Store != "main" {
			t.Errorf("profile %s: %+v %v, want source local:%s, store main", name, p, err, src)
		}
	}
	// Run again: everything is there, nothing to write.
	o = mainWith(t, env, "setup", "workstation", "-yes", "-json")
	_, folders = folderEntries(t, o.stdout)
	for _, e := range folders {
		if e.Action != "skip" {
			t.Errorf("second run: %+v, want skip", e)
		}
	}
}

// TestSetupWorkstationRefusals: bad input is one line and exit 2, and
// nothing is written; without -yes or a terminal it refuses too.
func TestSetupWorkstationRefusals(t *testing.T) {
	env, _, profiles := setupHome(t)
	before, err := os.ReadFile(profiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown store", []string{"-store-ref", "nope", "-yes"}, `-store-ref "nope": no such store`},
		{"yes and dry run", []string{"-yes", "-dry-run"}, "give one"},
		{"no terminal", nil, "-yes (to write the profiles without a terminal)"},
		{"argument", []string{"extra"}, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := mainWith(t, env, append([]string{"setup", "workstation"}, tc.args...)...)
			if o.code != cli.ExitUsage || !strings.Contains(o.stderr, tc.want) || strings.Count(strings.TrimSpace(o.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", o.code, o.stderr, tc.want)
			}
		})
	}
	if after, _ := os.ReadFile(profiles); string(after) != string(before) {
		t.Errorf("a refused setup changed %s:\n%s", profiles, after)
	}
}

// TestSourceDiscover: -json lists / with its file system type; the
// table has a header and /; -portable-only lists only portable ones.
func TestSourceDiscover(t *testing.T) {
	o := mainWith(t, nil, "source", "discover", "-json")
	if o.code != cli.ExitOK {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	var mounts []struct {
		MountPoint string `json:"mount_point"`
		FSType     string `json:"fs_type"`
		Portable   bool   `json:"portable"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &mounts); err != nil {
		t.Fatalf("%v: %s", err, o.stdout)
	}
	root := false
	for _, m := range mounts {
		root = root || m.MountPoint == "/" && m.FSType != ""
	}
	if !root {
		t.Errorf("no / with a type in %s", o.stdout)
	}
	mainWith(t, nil, "source", "discover").check(t, cli.ExitOK, []string{"MOUNT POINT", "\n/ "}, nil)
	o = mainWith(t, nil, "source", "discover", "-portable-only", "-json")
	if err := json.Unmarshal([]byte(o.stdout), &mounts); err != nil || o.code != cli.ExitOK {
		t.Fatalf("exit %d, %v: %s", o.code, err, o.stdout)
	}
	for _, m := range mounts {
		if !m.Portable {
			t.Errorf("-portable-only lists %+v", m)
		}
	}
}
