//go:build !windows

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExposure loads profiles files of each mode: a file others may read
// is named, with its mode and the fields holding literal secrets, only
// when it holds some; one others may change always is; a 0600 file never.
func TestExposure(t *testing.T) {
	t.Parallel()
	secretFields := []string{"stores.bucket.s3_secret_key", "stores.nas.store_sftp_password"}
	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		want    []string // in the message; nil: no message
	}{
		{"0600 with secrets", literalFile, 0o600, nil},
		{"0644 with secrets", literalFile, 0o644, append([]string{"(mode 0644)", "read the literal secrets", "chmod 600"}, secretFields...)},
		{"0640 with secrets", literalFile, 0o640, append([]string{"(mode 0640)"}, secretFields...)},
		{"0644 with references only", cloudsticFile, 0o644, nil},
		{"0666 with references only", cloudsticFile, 0o666, []string{"(mode 0666)", "change it"}},
		{"0620 with secrets", literalFile, 0o620, []string{"change it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "profiles.yaml")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			msg := f.Exposure()
			if tc.want == nil {
				if msg != "" {
					t.Errorf("Exposure() = %q, want nothing", msg)
				}
				return
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(msg, w) {
					t.Errorf("Exposure() = %q, lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "wJalrXUtnFEMI") || strings.Contains(msg, "\n") {
				t.Errorf("Exposure() = %q: a secret, or more than one line", msg)
			}
		})
	}
}
