package kmstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// Server is the local KMS server of the test environment.
type Server struct {
	// Endpoint is its URL, Region the region in its key ARNs.
	Endpoint, Region string
	api              *kms.Client
}

// Env returns the server that scripts/kms-server.sh described in
// KMS_TEST_ENDPOINT and KMS_TEST_REGION, failing the test when unset.
func Env(t testing.TB) *Server {
	t.Helper()
	s := &Server{Endpoint: os.Getenv("KMS_TEST_ENDPOINT"), Region: os.Getenv("KMS_TEST_REGION")}
	if s.Endpoint == "" || s.Region == "" {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("no KMS test server (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal(`KMS test server not configured (KMS_TEST_ENDPOINT/KMS_TEST_REGION unset): start it with: eval "$(scripts/kms-server.sh)"`)
	}
	s.api = kms.New(kms.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	return s
}

// NewKey creates a symmetric key and returns its ARN.
func (s *Server) NewKey(t testing.TB) string {
	t.Helper()
	out, err := s.api.CreateKey(context.Background(), &kms.CreateKeyInput{Description: aws.String(t.Name())})
	if err != nil {
		t.Fatalf("CreateKey on %s: %v", s.Endpoint, err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

// NewAlias points a new alias/cloudstic-test-<random> at key and returns
// the alias name.
func (s *Server) NewAlias(t testing.TB, keyARN string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	alias := "alias/cloudstic-test-" + hex.EncodeToString(b)
	if _, err := s.api.CreateAlias(context.Background(), &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(keyARN)}); err != nil {
		t.Fatalf("CreateAlias: %v", err)
	}
	return alias
}

// Disable disables the key; Enable enables it again.
func (s *Server) Disable(t testing.TB, keyARN string) {
	t.Helper()
	if _, err := s.api.DisableKey(context.Background(), &kms.DisableKeyInput{KeyId: aws.String(keyARN)}); err != nil {
		t.Fatalf("DisableKey: %v", err)
	}
}

// Enable enables a disabled key.
func (s *Server) Enable(t testing.TB, keyARN string) {
	t.Helper()
	if _, err := s.api.EnableKey(context.Background(), &kms.EnableKeyInput{KeyId: aws.String(keyARN)}); err != nil {
		t.Fatalf("EnableKey: %v", err)
	}
}

// Decrypt decrypts a ciphertext blob with the key and encryption context
// given (tests use it to find the master key a slot holds).
func (s *Server) Decrypt(t testing.TB, keyARN string, blob []byte, encCtx map[string]string) []byte {
	t.Helper()
	out, err := s.api.Decrypt(context.Background(), &kms.DecryptInput{KeyId: aws.String(keyARN), CiphertextBlob: blob, EncryptionContext: encCtx})
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	return out.Plaintext
}
