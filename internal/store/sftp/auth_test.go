package sftp

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/cloudstic/cloudstic/internal/store"
)

// writeKey writes a new unencrypted ed25519 private key in OpenSSH format
// and returns its file name.
func writeKey(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "id_test")
	if err := os.WriteFile(name, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// knownHostsWith writes a known_hosts file naming the test server with a
// freshly generated key of the given type.
func knownHostsWith(t *testing.T, cfg Config, keyType string) string {
	t.Helper()
	var pub ssh.PublicKey
	var err error
	switch keyType {
	case "ed25519":
		var k ed25519.PublicKey
		k, _, err = ed25519.GenerateKey(rand.Reader)
		if err == nil {
			pub, err = ssh.NewPublicKey(k)
		}
	case "ecdsa":
		var k *ecdsa.PrivateKey
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err == nil {
			pub, err = ssh.NewPublicKey(&k.PublicKey)
		}
	default:
		t.Fatalf("key type %q", keyType)
	}
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "known_hosts")
	line := fmt.Sprintf("[%s]:%d %s", cfg.Host, cfg.Port, ssh.MarshalAuthorizedKey(pub))
	if err := os.WriteFile(name, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestConnectErrors(t *testing.T) {
	base := testConfig(t)
	empty := filepath.Join(t.TempDir(), "empty_known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		modify func(c *Config)
		want   error
	}{
		{"WrongKey", func(c *Config) { c.KeyFile = writeKey(t) }, ErrAuthFailed},
		{"WrongPassword", func(c *Config) { c.KeyFile, c.Password = "", "not-the-password" }, ErrAuthFailed},
		// testdata/encrypted_ed25519: ssh-keygen -t ed25519 -N secret (made
		// once: encrypting with bcrypt-pbkdf takes seconds under -race).
		{"EncryptedKey", func(c *Config) { c.KeyFile = "testdata/encrypted_ed25519" }, ErrEncryptedKey},
		{"NoCredentials", func(c *Config) { c.KeyFile = "" }, ErrNoCredentials},
		{"NoUser", func(c *Config) { c.User = "" }, ErrNoUser},
		{"UnknownHost", func(c *Config) { c.KnownHostsFile = empty }, ErrUnknownHostKey},
		{"NoKnownHostsFile", func(c *Config) { c.KnownHostsFile = filepath.Join(t.TempDir(), "absent") }, ErrUnknownHostKey},
		{"ChangedHostKey", func(c *Config) { c.KnownHostsFile = knownHostsWith(t, *c, "ed25519") }, ErrHostKeyMismatch},
		{"ChangedHostKeyType", func(c *Config) { c.KnownHostsFile = knownHostsWith(t, *c, "ecdsa") }, ErrHostKeyMismatch},
		{"MissingDir", func(c *Config) { c.CreateDir = false }, ErrNoRepositoryDir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// No agent (Config.AgentSocket empty, whatever the
			// environment says): the test decides the credentials.
			t.Setenv("SSH_AUTH_SOCK", "/nonexistent")
			cfg := base
			c.modify(&cfg)
			s, err := Open(context.Background(), cfg)
			if err == nil {
				s.Close() //nolint:errcheck // the test fails anyway
				t.Fatalf("Open succeeded, want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open = %v, want %v", err, c.want)
			}
			t.Logf("error: %v", err)
		})
	}
}

func TestInsecureIgnoreHostKey(t *testing.T) {
	cfg := testConfig(t)
	cfg.KnownHostsFile = knownHostsWith(t, cfg, "ed25519")
	cfg.InsecureIgnoreHostKey = true
	s := mustOpen(t, cfg)
	if _, err := s.Put(context.Background(), "k", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAgent logs in with the test key held by an ssh-agent (x/crypto's
// agent keyring served on a unix socket) instead of a key file.
func TestAgent(t *testing.T) {
	cfg := testConfig(t)
	pemBytes, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ln.Close() //nolint:errcheck // test teardown
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // listener closed
			}
			go func() {
				defer c.Close() //nolint:errcheck // the test agent's side of a finished conversation
				// ServeAgent ends with io.EOF when the client hangs up.
				_ = agent.ServeAgent(keyring, c)
			}()
		}
	}()
	// The agent comes from the options, never the environment.
	t.Setenv("SSH_AUTH_SOCK", "")
	cfg.KeyFile, cfg.AgentSocket = "", sock
	s := mustOpen(t, cfg)
	if _, err := s.Put(context.Background(), "k", []byte("agent"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}
