package operation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// switchedOff rewrites the config of the local repository in dir to say
// "not encrypted" and removes its key slots, as a store writer without the
// key can: nothing in the store tells any more.
func switchedOff(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, repo.ConfigKey)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["encrypted"], m["chunker_key"] = false, strings.Repeat("00", 32)
	delete(m, "mac")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "keys")); err != nil {
		t.Fatal(err)
	}
}

// TestHostMemory: a host that opened a repository encrypted refuses it
// once its config says "not encrypted" (by location, and by id when the
// repository moved), without credentials and with nothing in the store to
// tell; a host without that memory cannot know (docs/format.md).
func TestHostMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	checktest.NewRepo(t, dir)
	memory := t.TempDir()
	open := func(uri string, known string, creds repo.Credentials) error {
		r, err := operation.Open(ctx, operation.Options{
			Store:       operation.StoreOptions{URI: uri},
			Credentials: func(context.Context) (repo.Credentials, error) { return creds, nil },
			KnownDir:    known,
		})
		if err == nil {
			_ = r.Close() // a local store: nothing to flush
		}
		return err
	}
	if err := open("local:"+dir, memory, repo.Credentials{PlatformKey: checktest.Key}); err != nil {
		t.Fatal(err)
	}
	switchedOff(t, dir)
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	// A symbolic link to the moved repository at its old place: the same
	// location by name.
	if err := os.Symlink(moved, dir); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		uri  string
		mem  string
		want error
	}{
		{"same location", "local:" + dir, memory, repo.ErrDowngrade},
		{"same location, relative path", relative(t, dir), memory, repo.ErrDowngrade},
		{"moved: same id", "local:" + moved, memory, repo.ErrDowngrade},
		{"another host", "local:" + dir, t.TempDir(), nil},
		{"no memory", "local:" + dir, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := open(tc.uri, tc.mem, repo.Credentials{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if tc.want != nil && !strings.Contains(err.Error(), "this host opened") {
				t.Errorf("%q does not say why", err)
			}
		})
	}
}

// relative returns dir as a local: URI relative to the working directory.
func relative(t *testing.T, dir string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	return "local:" + rel
}
