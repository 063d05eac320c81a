package repo_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/repo/kms/kmstest"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

func kmsClient(t *testing.T, srv *kmstest.Server, keyARN string) *kms.Client {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	cfg := kms.Config{KeyARN: keyARN, Endpoint: srv.Endpoint}
	if !strings.HasPrefix(keyARN, "arn:") {
		cfg.Region = srv.Region // an alias name carries no region; an ARN does
	}
	c, err := kms.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kmsSlotFiles returns the paths of the kms-platform slots under dir.
func kmsSlotFiles(t *testing.T, dir string) []string {
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

// TestKMSSlots: repositories whose master key is wrapped by a key on the
// local KMS server: KMS-only and KMS+password repositories open with each
// credential they hold and refuse a wrong key, a disabled key, and a slot
// moved from another repository (by its recorded id, and by KMS's check of
// the encryption context when the recorded id is forged).
func TestKMSSlots(t *testing.T) {
	srv := kmstest.Env(t)
	ctx := context.Background()
	keyA, keyB := srv.NewKey(t), srv.NewKey(t)
	a, b := kmsClient(t, srv, keyA), kmsClient(t, srv, keyB)

	kmsOnly := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(kmsOnly), repo.InitOptions{Credentials: repo.Credentials{KMS: a}}); err != nil {
		t.Fatal(err)
	}
	both := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(both), repo.InitOptions{Credentials: repo.Credentials{KMS: a, Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	passwordOnly := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(passwordOnly), repo.InitOptions{Credentials: repo.Credentials{Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	// A slot of kmsOnly copied into another repository made with key A.
	other := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(other), repo.InitOptions{Credentials: repo.Credentials{Password: "other"}}); err != nil {
		t.Fatal(err)
	}
	moved := kmsSlotFiles(t, kmsOnly)[0]
	data, err := os.ReadFile(moved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "keys", filepath.Base(moved)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The same, with the slot's recorded repository id forged to match.
	forged := t.TempDir()
	r, _, err := repo.Init(ctx, local.New(forged), repo.InitOptions{Credentials: repo.Credentials{Password: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	var slot map[string]any
	if err := json.Unmarshal(data, &slot); err != nil {
		t.Fatal(err)
	}
	slot["repository_id"] = r.Config().ID
	forgedData, _ := json.Marshal(slot) // a map of JSON values always marshals
	if err := os.WriteFile(filepath.Join(forged, "keys", filepath.Base(moved)), forgedData, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		dir   string
		creds repo.Credentials
		want  error // nil: opens
	}{
		{"kms only, with the key", kmsOnly, repo.Credentials{KMS: a}, nil},
		{"kms only, through an alias", kmsOnly, repo.Credentials{KMS: kmsClient(t, srv, srv.NewAlias(t, keyA))}, nil},
		{"kms only, another key", kmsOnly, repo.Credentials{KMS: b}, kms.ErrWrongKey},
		{"kms only, a password", kmsOnly, repo.Credentials{Password: "pw"}, repo.ErrWrongCredential},
		{"both, with the key", both, repo.Credentials{KMS: a}, nil},
		{"both, with the password", both, repo.Credentials{Password: "pw"}, nil},
		{"both, another key then the password", both, repo.Credentials{KMS: b, Password: "pw"}, nil},
		{"both, another key and a wrong password", both, repo.Credentials{KMS: b, Password: "no"}, kms.ErrWrongKey},
		{"slot moved to another repository", other, repo.Credentials{KMS: a}, kms.ErrContextMismatch},
		{"moved slot with a forged repository id", forged, repo.Credentials{KMS: a}, kms.ErrContextMismatch},
		{"only another key's slot", both, repo.Credentials{KMS: b}, kms.ErrWrongKey},
		{"no kms slot", passwordOnly, repo.Credentials{KMS: a}, repo.ErrWrongCredential},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := repo.Open(ctx, local.New(tt.dir), tt.creds)
			if tt.want == nil && err != nil {
				t.Fatalf("Open: %v", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v, want %v", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	t.Run("disabled key", func(t *testing.T) {
		srv.Disable(t, keyA)
		defer srv.Enable(t, keyA)
		_, err := repo.Open(ctx, local.New(kmsOnly), repo.Credentials{KMS: a})
		if !errors.Is(err, kms.ErrKeyDisabled) {
			t.Fatalf("Open with a disabled key: %v, want ErrKeyDisabled", err)
		}
		if _, err := repo.Open(ctx, local.New(both), repo.Credentials{KMS: a, Password: "pw"}); err != nil {
			t.Fatalf("the password does not open when the key is disabled: %v", err)
		}
	})
}

// TestKMSKeyring: a KMS slot added to a password repository opens it and is
// listed with its key; a KMS-opened keyring adds a recovery key.
func TestKMSKeyring(t *testing.T) {
	srv := kmstest.Env(t)
	ctx := context.Background()
	key := srv.NewKey(t)
	c := kmsClient(t, srv, key)
	st := local.New(t.TempDir())
	if _, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	kr, err := repo.OpenKeyring(ctx, st, repo.Credentials{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	added, err := kr.WithoutLock().AddKMS(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if added.Kind != crypt.SlotKMS || added.KMSKeyARN != key || added.Label != "kms-platform 1" {
		t.Fatalf("added %+v", added)
	}
	kr2, err := repo.OpenKeyring(ctx, st, repo.Credentials{KMS: c})
	if err != nil {
		t.Fatal(err)
	}
	if kr2.Current() != added.ID {
		t.Errorf("opened with slot %s, want the KMS slot %s", kr2.Current(), added.ID)
	}
	entropy, words, err := crypt.NewRecoveryKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr2.WithoutLock().Add(ctx, crypt.SlotRecovery, "", entropy); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Open(ctx, st, repo.Credentials{RecoveryKey: words}); err != nil {
		t.Fatalf("the recovery key added through KMS does not open: %v", err)
	}
}
