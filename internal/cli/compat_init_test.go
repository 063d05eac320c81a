package cli

import (
	"regexp"
	"strings"
	"testing"
)

// compatMnemonic is how a Cloudstic user's script finds the recovery key's
// 24 words in the banner.
var compatMnemonic = regexp.MustCompile(`║\s{2}((?:\w+\s+){23}\w+)`)

// TestCompatInit: init's words as Cloudstic's: "encryption is required"
// without a credential, the RECOVERY KEY banner, "Repository initialized
// (encrypted: …)", "no provided credential matches" for a wrong password,
// and -adopt-slots, which accepts an existing repository that the
// credential given opens. All of it on stderr, as Cloudstic prints it (a
// script keeps the recovery key with 2>file); stdout stays empty.
func TestCompatInit(t *testing.T) {
	dir := t.TempDir()
	r := uxRun(t, dir, "init")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "encryption is required") {
		t.Errorf("init without a credential: exit %d, %q", r.code, r.stderr)
	}

	r = uxOK(t, dir, "init", "-password", "pw", "-add-recovery-key")
	out := r.stderr
	if r.stdout != "" {
		t.Errorf("init printed on stdout:\n%s", r.stdout)
	}
	m := compatMnemonic.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "RECOVERY KEY") || !strings.Contains(out, "Repository initialized (encrypted: true).") {
		t.Fatalf("init output:\n%s", out)
	}
	words := strings.TrimSpace(m[1])
	if len(strings.Fields(words)) != 24 {
		t.Fatalf("recovery key %q: want 24 words", words)
	}
	uxOK(t, dir, "list", "-recovery-key", words)

	// key add-recovery prints the same banner.
	out = uxOK(t, dir, "key", "add-recovery", "-password", "pw").stderr
	if m := compatMnemonic.FindStringSubmatch(out); m == nil {
		t.Errorf("key add-recovery: no banner a script can read:\n%s", out)
	} else {
		uxOK(t, dir, "list", "-recovery-key", strings.TrimSpace(m[1]))
	}

	r = uxRun(t, dir, "list", "-password", "wrong")
	if r.code != ExitError || !strings.Contains(r.stderr, "no provided credential matches") {
		t.Errorf("wrong password: exit %d, %q", r.code, r.stderr)
	}

	adopt := []struct {
		name  string
		args  []string
		code  int
		words string
	}{
		{"without -adopt-slots", []string{"init", "-password", "pw"}, ExitError, "already exists"},
		{"adopt", []string{"init", "-adopt-slots", "-password", "pw"}, ExitOK, "Adopted existing encryption key slots."},
		{"adopt, wrong password", []string{"init", "-adopt-slots", "-password", "wrong"}, ExitError, "no provided credential matches"},
		{"adopt as unencrypted", []string{"init", "-adopt-slots", "-no-encryption"}, ExitError, "already exists"},
	}
	for _, tc := range adopt {
		t.Run(tc.name, func(t *testing.T) {
			r := uxRun(t, dir, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.words) || r.stdout != "" {
				t.Errorf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", r.code, tc.code, tc.words, r.stdout, r.stderr)
			}
		})
	}
	var doc struct {
		Adopted   bool `json:"adopted_slots"`
		Encrypted bool `json:"encrypted"`
	}
	uxJSON(t, uxOK(t, dir, "init", "-adopt-slots", "-password", "pw", "-json").stdout, &doc)
	if !doc.Adopted || !doc.Encrypted {
		t.Errorf("init -adopt-slots -json = %+v", doc)
	}

	// An unencrypted repository: adopted with -no-encryption.
	plain := t.TempDir()
	out = uxOK(t, plain, "init", "-no-encryption").stderr
	if !strings.Contains(out, "Repository initialized (encrypted: false).") {
		t.Errorf("init -no-encryption:\n%s", out)
	}
	uxOK(t, plain, "init", "-no-encryption", "-adopt-slots")
}
