package kms_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/kms"
	"github.com/cloudstic/cloudstic/internal/repo/kms/kmstest"
)

func open(t *testing.T, srv *kmstest.Server, keyARN string) *kms.Client {
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

// TestEncryptDecrypt covers each outcome of Decrypt against the local KMS
// server: the round trip (also through an alias), another repository's
// context, another key, a disabled key, a missing key, and no server.
func TestEncryptDecrypt(t *testing.T) {
	srv := kmstest.Env(t)
	ctx := context.Background()
	keyA, keyB := srv.NewKey(t), srv.NewKey(t)
	a := open(t, srv, keyA)
	secret := bytes.Repeat([]byte{7}, 32)
	blob, arn, err := a.Encrypt(ctx, secret, "repo-1")
	if err != nil {
		t.Fatal(err)
	}
	if arn != keyA {
		t.Errorf("Encrypt reported key %q, want %q", arn, keyA)
	}
	if bytes.Contains(blob, secret) {
		t.Fatal("the ciphertext contains the plaintext")
	}
	got, err := a.Decrypt(ctx, blob, "repo-1")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Decrypt = %x, %v", got, err)
	}
	alias := open(t, srv, srv.NewAlias(t, keyA))
	if got, err := alias.Decrypt(ctx, blob, "repo-1"); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Decrypt through an alias = %x, %v", got, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() //nolint:errcheck // only its free port was wanted
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	noServer, err := kms.Open(ctx, kms.Config{KeyARN: keyA, Endpoint: closed})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client *kms.Client
		repoID string
		want   error
	}{
		{"other repository", a, "repo-2", kms.ErrContextMismatch},
		// local-kms answers another key's ciphertext with
		// InvalidCiphertextException where AWS says IncorrectKeyException;
		// both are refusals (the repository layer tells them apart by ARN).
		{"other key", open(t, srv, keyB), "repo-1", kms.ErrContextMismatch},
		{"missing key", open(t, srv, "arn:aws:kms:"+srv.Region+":111122223333:key/00000000-0000-0000-0000-000000000000"), "repo-1", kms.ErrKeyNotFound},
		{"unreachable", noServer, "repo-1", kms.ErrUnreachable},
	}
	t.Run("no region", func(t *testing.T) {
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
		_, err := kms.Open(ctx, kms.Config{KeyARN: "alias/x", Endpoint: srv.Endpoint})
		if !errors.Is(err, kms.ErrNoRegion) {
			t.Fatalf("Open without a region: %v, want ErrNoRegion", err)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.client.Decrypt(ctx, blob, tt.repoID)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decrypt: %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("disabled", func(t *testing.T) {
		srv.Disable(t, keyA)
		defer srv.Enable(t, keyA)
		if _, err := a.Decrypt(ctx, blob, "repo-1"); !errors.Is(err, kms.ErrKeyDisabled) {
			t.Fatalf("Decrypt with a disabled key: %v, want ErrKeyDisabled", err)
		}
		if _, _, err := a.Encrypt(ctx, secret, "repo-1"); !errors.Is(err, kms.ErrKeyDisabled) {
			t.Fatalf("Encrypt with a disabled key: %v, want ErrKeyDisabled", err)
		}
	})
}
