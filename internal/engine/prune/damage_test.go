package prune_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// TestPruneRefusesDamage: while a snapshot or an index file is damaged,
// prune (and its dry run) deletes nothing and says which object and which
// repair to run, on one line: a damaged index file's packs would look
// unused, a damaged snapshot's data unused.
func TestPruneRefusesDamage(t *testing.T) {
	t.Parallel()
	junk := func(t *testing.T, dir, prefix string) string {
		t.Helper()
		b := make([]byte, 200)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		key := prefix + fmt.Sprintf("%x", sha256.Sum256(b))
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(key)), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return key
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string) string
		want   error
	}{
		{"junk snapshot", func(t *testing.T, dir string) string { return junk(t, dir, repo.SnapshotPrefix) }, prune.ErrDamagedSnapshot},
		{"junk index file", func(t *testing.T, dir string) string { return junk(t, dir, repo.IndexPrefix) }, prune.ErrDamagedIndex},
		{"index file with a flipped byte", func(t *testing.T, dir string) string {
			files, err := filepath.Glob(filepath.Join(dir, "index", "packs", "*"))
			if err != nil || len(files) == 0 {
				t.Fatal("no index files", err)
			}
			sort.Strings(files)
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			data[40] ^= 1
			if err := os.WriteFile(files[0], data, 0o600); err != nil {
				t.Fatal(err)
			}
			return repo.IndexPrefix + filepath.Base(files[0])
		}, prune.ErrDamagedIndex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			for i := range 2 {
				src := t.TempDir()
				checktest.WriteFile(t, src, "f", uint64(i), 300<<10)
				sid := checktest.Backup(t, st, src)
				if i == 0 {
					// Its data is garbage for prune to collect.
					if err := checktest.Open(t, st).WithoutLock().DeleteSnapshot(context.Background(), sid); err != nil {
						t.Fatal(err)
					}
				}
			}
			key := tc.damage(t, dir)
			before := listing(t, dir)
			for _, dry := range []bool{true, false} {
				_, err := pruneLocked(t, st, checktest.Open(t, st), prune.Options{DryRun: dry})
				if !errors.Is(err, tc.want) {
					t.Fatalf("dry run %v: %v, want %v", dry, err, tc.want)
				}
				if msg := err.Error(); !strings.Contains(msg, key) || !strings.Contains(msg, "cloudstic repair") || strings.Contains(msg, "\n") {
					t.Errorf("error %q is not one line naming %s and the repair", msg, key)
				}
				if after := listing(t, dir); !reflect.DeepEqual(after, before) {
					t.Fatalf("dry run %v: prune changed the repository", dry)
				}
			}
		})
	}
}

// listing returns the keys under data/, index/packs/ and snapshots/.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"data/*/*", "index/packs/*", "snapshots/*"} {
		m, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}
