package operation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestOpenFailures: each way of not getting a repository fails with the
// error a caller needs to say what to do, and asks for credentials only
// when the repository is encrypted.
func TestOpenFailures(t *testing.T) {
	ctx := context.Background()
	encrypted := t.TempDir()
	checktest.NewRepo(t, encrypted)
	plain := t.TempDir()
	if _, _, err := repo.Init(ctx, local.New(plain), repo.InitOptions{NoEncryption: true}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	errPrompt := errors.New("no terminal")
	cases := []struct {
		name  string
		uri   string
		creds repo.Credentials
		// credErr is what the credential source returns.
		credErr   error
		want      error
		wantAsked bool
	}{
		{"unknown scheme", "ftp://host/x", repo.Credentials{}, nil, operation.ErrStoreURI, false},
		{"s3 without bucket", "s3:", repo.Credentials{}, nil, operation.ErrStoreURI, false},
		{"local without path", "local:", repo.Credentials{}, nil, operation.ErrStoreURI, false},
		{"sftp without host", "sftp:///x", repo.Credentials{}, nil, operation.ErrStoreURI, false},
		{"missing directory", "local:" + filepath.Join(plain, "missing"), repo.Credentials{}, nil, operation.ErrNoRepository, false},
		{"empty directory", "local:" + t.TempDir(), repo.Credentials{}, nil, operation.ErrNoRepository, false},
		{"not a directory", file, repo.Credentials{}, nil, nil, false},
		{"encrypted, no credentials", "local:" + encrypted, repo.Credentials{}, nil, repo.ErrNeedCredential, true},
		{"encrypted, wrong password", "local:" + encrypted, repo.Credentials{Password: "nope"}, nil, repo.ErrWrongCredential, true},
		{"encrypted, prompt fails", "local:" + encrypted, repo.Credentials{}, errPrompt, errPrompt, true},
		{"unencrypted opens without asking", plain, repo.Credentials{}, nil, nil, false},
		{"encrypted opens", encrypted, repo.Credentials{PlatformKey: checktest.Key}, nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			r, err := operation.Open(ctx, operation.Options{
				Store: operation.StoreOptions{URI: c.uri},
				Credentials: func(context.Context) (repo.Credentials, error) {
					asked = true
					return c.creds, c.credErr
				},
			})
			if asked != c.wantAsked {
				t.Errorf("credentials asked: %v, want %v", asked, c.wantAsked)
			}
			switch {
			case c.name == "not a directory":
				if !errors.Is(err, operation.ErrUnreachable) {
					t.Fatalf("opened a file as a store: %v", err)
				}
			case c.want != nil:
				if !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				if storePhase := errors.Is(c.want, operation.ErrStoreURI); storePhase && !errors.Is(err, operation.ErrUnreachable) {
					t.Fatalf("err = %v, want it marked %v", err, operation.ErrUnreachable)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestOpenCreate: with Create, a missing local directory is made (init);
// without it, nothing is created.
func TestOpenCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	if _, err := operation.OpenStore(context.Background(), operation.StoreOptions{URI: dir}); !errors.Is(err, operation.ErrNoRepository) {
		t.Fatalf("without Create: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory made without Create: %v", err)
	}
	st, err := operation.OpenStore(context.Background(), operation.StoreOptions{URI: dir, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("with Create: %v", err)
	}
}
