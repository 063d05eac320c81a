package cli

import (
	"flag"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cloudstic/cloudstic/internal/config"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
)

// sampleValues are a value of each profile key that stands for a flag.
var sampleValues = map[string]string{
	"source": "local:/somewhere", "tags": "[t1, t2]", "excludes": `["*.tmp"]`, "exclude_file": "/etc/excludes",
	"ignore_empty": "true", "volume_uuid": "956bed6d-2f80-40e0-95e2-f5e3e5bb6f4f",
	"keep_last": "1", "keep_hourly": "2", "keep_daily": "3", "keep_weekly": "4", "keep_monthly": "5", "keep_yearly": "6", "prune": "true",
	"auth_ref": "google-work", "skip_native_files": "true", "google_credentials": "/etc/client.json",
	"google_credentials_ref": "env://GOOGLE_CLIENT", "google_token_file": "/etc/google-token.json",
	"google_token_ref": "config-token://google/work", "onedrive_client_id": "11111111-2222-3333-4444-555555555555",
	"onedrive_token_file": "/etc/onedrive-token.json", "onedrive_token_ref": "config-token://onedrive/ms",
}

// TestProfileKeysApplied: every profile key config.ProfileKeys says stands
// for a backup flag sets that flag unless the command line gave it, and
// every retention key is in the profile's policy.
func TestProfileKeysApplied(t *testing.T) {
	t.Parallel()
	for _, k := range config.ProfileKeys {
		cmd, flagName, ok := strings.Cut(k.As, " -")
		if !ok {
			continue
		}
		t.Run(k.Key, func(t *testing.T) {
			doc := k.Key + ": " + sampleValues[k.Key] + "\n"
			if k.Key != "source" {
				doc += "source: local:/base\n"
			}
			var p config.Profile
			if err := yaml.Unmarshal([]byte(doc), &p); err != nil {
				t.Fatal(err)
			}
			if cmd == "forget" {
				if pol := retentionPolicy(p); pol == (forget.Policy{}) && !p.Prune {
					t.Errorf("%s is not in the policy", k.Key)
				}
				return
			}
			for _, given := range []bool{false, true} {
				fs := flag.NewFlagSet("backup", flag.ContinueOnError)
				var f backupFlags
				f.register(fs, func(string) string { return "" })
				fl := fs.Lookup(flagName)
				if fl == nil {
					t.Fatalf("backup has no -%s", flagName)
				}
				if err := f.applyProfile("p", p, map[string]bool{flagName: given}); err != nil {
					t.Fatal(err)
				}
				if changed := fl.Value.String() != fl.DefValue; changed == given {
					t.Errorf("command line gives -%s: %v; the profile's %s changed it: %v (%q)", flagName, given, k.Key, changed, fl.Value.String())
				}
			}
		})
	}
}
