//go:build unix

package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/repo/kms/kmstest"
)

// kmsEnv is what every run against the local KMS server needs: any AWS
// credentials (local-kms does not check them).
var kmsEnv = []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"}

func kmsRun(t *testing.T, args ...string) result {
	t.Helper()
	return runWith(t, runOpts{env: kmsEnv}, args...)
}

func kmsMustRun(t *testing.T, args ...string) result {
	t.Helper()
	res := kmsRun(t, args...)
	if res.code != 0 {
		t.Fatalf("want exit 0, got %v", res)
	}
	return res
}

// TestKMSRepository: a repository opened by an AWS KMS key on the local
// KMS server, through the binary: init, backup, restore with KMS only;
// key list shows the slot and its key; a disabled key, another key, an
// unreachable KMS and a slot moved to another repository each give one
// line; the master key never shows in -debug output.
func TestKMSRepository(t *testing.T) {
	t.Parallel()
	srv := kmstest.Env(t)
	key, other := srv.NewKey(t), srv.NewKey(t)
	dir := filepath.Join(t.TempDir(), "repo")
	r := repoArgs{"-store", "local:" + dir, "-kms-key-arn", key, "-kms-endpoint", srv.Endpoint}
	kmsMustRun(t, r.with("init")...)
	src := smallTree(t, 11)
	res := kmsMustRun(t, r.with("backup", "-debug", "-source", "local:"+src)...)
	dst := filepath.Join(t.TempDir(), "out")
	kmsMustRun(t, r.with("restore", "-output", dst)...)
	compareTrees(t, src, dst, cmpOpts{})

	t.Run("master key never logged", func(t *testing.T) {
		slots := readKMSSlots(t, dir)
		if len(slots) != 1 {
			t.Fatalf("%d kms-platform slots, want 1", len(slots))
		}
		master := srv.Decrypt(t, key, slots[0].Wrapped, map[string]string{kms.ContextKey: slots[0].RepositoryID})
		for _, form := range []string{hex.EncodeToString(master), base64.StdEncoding.EncodeToString(master), string(master)} {
			if strings.Contains(res.stderr+res.stdout, form) {
				t.Fatalf("backup -debug printed the master key")
			}
		}
		if !strings.Contains(res.stderr, "debug: ") {
			t.Errorf("backup -debug printed no debug line: the check above proves nothing\n%s", res.stderr)
		}
	})
	t.Run("key list", func(t *testing.T) {
		res := kmsMustRun(t, append([]string{"key", "list"}, r...)...)
		if !strings.Contains(res.stdout, "kms-platform") || !strings.Contains(res.stdout, key) {
			t.Errorf("key list does not show the kms-platform slot and its key:\n%s", res.stdout)
		}
		var slots []map[string]any
		decodeJSON(t, kmsMustRun(t, append([]string{"key", "list", "-json"}, r...)...), &slots)
		if len(slots) != 1 || slots[0]["kind"] != "kms-platform" || slots[0]["kms_key_arn"] != key {
			t.Errorf("key list -json: %v", slots)
		}
	})
	t.Run("environment", func(t *testing.T) {
		res := runWith(t, runOpts{env: append([]string{"CLOUDSTIC_KMS_KEY_ARN=" + key, "CLOUDSTIC_KMS_ENDPOINT=" + srv.Endpoint}, kmsEnv...)},
			"list", "-store", "local:"+dir)
		wantCode(t, res, 0)
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() //nolint:errcheck // only its free port was wanted
	moved := filepath.Join(t.TempDir(), "moved")
	kmsMustRun(t, "init", "-store", "local:"+moved, "-password", "pw")
	copyKMSSlots(t, dir, moved)
	tests := []struct {
		name string
		args []string
		subs []string
	}{
		{"another key", []string{"list", "-store", "local:" + dir, "-kms-key-arn", other, "-kms-endpoint", srv.Endpoint}, []string{"wrapped by " + key}},
		{"unreachable", []string{"list", "-store", "local:" + dir, "-kms-key-arn", key, "-kms-endpoint", closed}, []string{"unreachable"}},
		{"moved slot", []string{"list", "-store", "local:" + moved, "-kms-key-arn", key, "-kms-endpoint", srv.Endpoint}, []string{"encryption context mismatch"}},
		{"no password slot", []string{"list", "-store", "local:" + dir, "-password", "pw"}, []string{"no password key slot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := kmsRun(t, tt.args...)
			wantCode(t, res, 1)
			wantOneLineError(t, res, tt.subs...)
		})
	}
	t.Run("disabled", func(t *testing.T) {
		srv.Disable(t, key)
		defer srv.Enable(t, key)
		res := kmsRun(t, r.with("list")...)
		wantCode(t, res, 1)
		wantOneLineError(t, res, "disabled")
	})
}

// TestKMSWithPassword: init -kms-key-arn -prompt makes a password slot
// beside the KMS one, and either opens the repository; key add
// -kms-key-arn adds a KMS slot to a password repository; key add-recovery
// -kms-key-arn adds a recovery key to a KMS-opened repository.
func TestKMSWithPassword(t *testing.T) {
	t.Parallel()
	srv := kmstest.Env(t)
	key, second := srv.NewKey(t), srv.NewKey(t)
	store := []string{"-store", "local:" + filepath.Join(t.TempDir(), "repo")}
	withKMS := func(k string, args ...string) []string {
		return append(append(args, store...), "-kms-key-arn", k, "-kms-endpoint", srv.Endpoint)
	}
	withPW := func(args ...string) []string { return append(append(args, store...), "-password", "pw") }
	kmsMustRun(t, withKMS(key, "init", "-prompt", "-password", "pw")...)
	kmsMustRun(t, withKMS(key, "list")...)
	kmsMustRun(t, withPW("list")...)

	// A password repository gains a KMS slot for a second key.
	res := kmsMustRun(t, append(withPW("key", "add"), "-kms-key-arn", second, "-kms-endpoint", srv.Endpoint)...)
	if !strings.Contains(res.stdout, "kms-platform "+second) {
		t.Errorf("key add -kms-key-arn did not report the new slot:\n%s", res.stdout)
	}
	kmsMustRun(t, withKMS(second, "list")...)

	res = kmsMustRun(t, withKMS(second, "key", "add-recovery")...)
	words := recoveryWords(t, res.stderr)
	kmsMustRun(t, append(append([]string{"list"}, store...), "-recovery-key", words)...)

	res = kmsRun(t, withKMS(key, "key", "passwd", "-new-password", "x")...)
	wantCode(t, res, 2)
	wantOneLineError(t, res, "kms-platform")

	// init -prompt without a key, and with -no-encryption, are usage errors.
	res = kmsRun(t, "init", "-store", "local:"+filepath.Join(t.TempDir(), "r2"), "-password", "pw", "-prompt")
	wantCode(t, res, 2)
	wantOneLineError(t, res, "-prompt")
}

// recoveryWords reads the 24 words from the RECOVERY KEY box (on stderr,
// as Cloudstic prints it), on the line that starts with "║  ", as a
// Cloudstic user's script reads them.
func recoveryWords(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "║  ")
		if f := strings.Fields(rest); ok && len(f) == 24 {
			return strings.Join(f, " ")
		}
	}
	t.Fatalf("no recovery phrase in:\n%s", stderr)
	return ""
}

// readKMSSlots returns the kms-platform slots of the local repository dir.
func readKMSSlots(t *testing.T, dir string) []*crypt.Slot {
	t.Helper()
	var out []*crypt.Slot
	for _, p := range kmsSlotPaths(t, dir) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s crypt.Slot
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, &s)
	}
	return out
}

func kmsSlotPaths(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, "keys", e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := crypt.DecodeSlot(data); err == nil && s.Kind == crypt.SlotKMS {
			out = append(out, p)
		}
	}
	return out
}

// copyKMSSlots copies the kms-platform slots of repository from into to.
func copyKMSSlots(t *testing.T, from, to string) {
	t.Helper()
	for _, p := range kmsSlotPaths(t, from) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, "keys", filepath.Base(p)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKMSProfile: a profiles.yaml store with kms_key_arn, kms_region and
// kms_endpoint opens a KMS-only repository for backup, list and restore
// with no KMS flag and no password anywhere.
func TestKMSProfile(t *testing.T) {
	t.Parallel()
	srv := kmstest.Env(t)
	key := srv.NewKey(t)
	p := newProfileEnv(t, kmsEnv...)
	repo := filepath.Join(p.dir, "repo")
	src := smallTree(t, 5)
	yaml := fmt.Sprintf(`version: 1
stores:
  vault:
    uri: local:%s
    kms_key_arn: %s
    kms_region: us-east-1
    kms_endpoint: %s
profiles:
  work:
    source: local:%s
    store: vault
`, repo, key, srv.Endpoint, src)
	if err := os.MkdirAll(p.cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.cfg, "profiles.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p.mustRun(t, "store", "init", "vault", "-yes")
	p.mustRun(t, "backup", "-profile", "work")
	if res := p.mustRun(t, "list", "-profile", "work"); !strings.Contains(res.stdout, src) {
		t.Fatalf("list -profile shows no snapshot of %s:\n%s", src, res.stdout)
	}
	dst := filepath.Join(t.TempDir(), "out")
	p.mustRun(t, "restore", "-profile", "work", "-output", dst)
	compareTrees(t, src, dst, cmpOpts{})
	if slots := readKMSSlots(t, repo); len(slots) != 1 {
		t.Fatalf("%d kms-platform slots, want 1", len(slots))
	}
}
