package repo_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

const hostileKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// newHostileRepo creates an encrypted repository (platform key: cheap to
// open) in a local store and returns its directory and store.
func newHostileRepo(t *testing.T) (string, store.Store) {
	t.Helper()
	dir := t.TempDir()
	st := local.New(dir)
	if _, _, err := repo.Init(context.Background(), st, repo.InitOptions{Credentials: repo.Credentials{PlatformKey: hostileKey}}); err != nil {
		t.Fatal(err)
	}
	return dir, st
}

// slotFiles returns the paths of the key slot files.
func slotFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "keys", "*"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no key slots: %v", err)
	}
	return m
}

// editJSON rewrites the JSON object in path with fn.
func editJSON(t *testing.T, path string, fn func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenHostile damages the config and the key slots: Open fails with
// the right sentinel and a one-line message, never panics.
func TestOpenHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		creds  repo.Credentials
		damage func(t *testing.T, dir string)
		want   []error
	}{
		{"wrong key", repo.Credentials{PlatformKey: strings.Repeat("ff", 32)}, nil, []error{repo.ErrWrongCredential}},
		{"wrong kind of credential", repo.Credentials{Password: hostileKey}, nil, []error{repo.ErrWrongCredential}},
		{"flipped byte in the wrapped key", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			for _, p := range slotFiles(t, dir) {
				editJSON(t, p, func(m map[string]any) {
					w := []byte(m["wrapped"].(string))
					w[len(w)/2] ^= 1
					m["wrapped"] = string(w)
				})
			}
		}, []error{repo.ErrWrongCredential}},
		{"flipped byte in the slot JSON", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			for _, p := range slotFiles(t, dir) {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				data[0] ^= 0xff
				if err := os.WriteFile(p, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, []error{repo.ErrWrongCredential}},
		{"truncated slot", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			for _, p := range slotFiles(t, dir) {
				if err := os.Truncate(p, 10); err != nil {
					t.Fatal(err)
				}
			}
		}, []error{repo.ErrWrongCredential}},
		{"slot with a short wrapped key", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			for _, p := range slotFiles(t, dir) {
				editJSON(t, p, func(m map[string]any) { m["wrapped"] = "AAEC" })
			}
		}, []error{repo.ErrWrongCredential}},
		{"config from a future version", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { m["version"] = 2 })
		}, []error{repo.ErrUnsupportedVersion}},
		{"config version 0", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) { delete(m, "version") })
		}, []error{repo.ErrUnsupportedVersion}},
		{"garbage config", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "config"), []byte("\x00\xffgarbage"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []error{repo.ErrCorruptConfig}},
		{"empty config", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "config"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, []error{repo.ErrCorruptConfig}},
		{"config with absurd chunker", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, "config"), func(m map[string]any) {
				m["chunker"] = map[string]any{"min": 1, "avg": 2, "max": 1 << 40}
			})
		}, []error{repo.ErrCorruptConfig}},
		{"config missing", repo.Credentials{PlatformKey: hostileKey}, func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "config")); err != nil {
				t.Fatal(err)
			}
		}, []error{repo.ErrNotRepository}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, st := newHostileRepo(t)
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			_, err := repo.Open(context.Background(), st, tc.creds)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Open error %v, want %v", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestHostileKDF stores password slots whose argon2id parameters would
// make opening allocate terabytes or spin for hours: they are refused as
// malformed before any work is done.
func TestHostileKDF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kdf  map[string]any
	}{
		{"huge memory", map[string]any{"time": 1, "memory_kib": 4294967295, "threads": 1, "salt": "AAAAAAAAAAAAAAAAAAAAAA=="}},
		{"huge time", map[string]any{"time": 4294967295, "memory_kib": 64, "threads": 1, "salt": "AAAAAAAAAAAAAAAAAAAAAA=="}},
		{"zero threads", map[string]any{"time": 1, "memory_kib": 64, "threads": 0, "salt": "AAAAAAAAAAAAAAAAAAAAAA=="}},
		{"no salt", map[string]any{"time": 1, "memory_kib": 64, "threads": 1, "salt": ""}},
		{"missing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := local.New(dir)
			if _, _, err := repo.Init(context.Background(), st, repo.InitOptions{Credentials: repo.Credentials{Password: "pw"}}); err != nil {
				t.Fatal(err)
			}
			for _, p := range slotFiles(t, dir) {
				editJSON(t, p, func(m map[string]any) {
					if tc.kdf == nil {
						delete(m, "kdf")
					} else {
						m["kdf"] = tc.kdf
					}
				})
			}
			_, err := repo.Open(context.Background(), st, repo.Credentials{Password: "pw"})
			// The slot's own error travels as text (the credential error is
			// the one callers act on); it must name the slot.
			if !errors.Is(err, repo.ErrWrongCredential) || !strings.Contains(err.Error(), "keys/") {
				t.Fatalf("Open error %v, want ErrWrongCredential naming the malformed slot", err)
			}
		})
	}
}

// TestKeySlotPermissions checks key slot files are readable by their owner
// only on local stores.
func TestKeySlotPermissions(t *testing.T) {
	t.Parallel()
	dir, st := newHostileRepo(t)
	ctx := context.Background()
	kr, err := repo.OpenKeyring(ctx, st, repo.Credentials{PlatformKey: hostileKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kr.WithoutLock().Add(ctx, crypt.SlotPassword, "second", []byte("pw2")); err != nil {
		t.Fatal(err)
	}
	files := slotFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("%d slot files, want 2", len(files))
	}
	for _, p := range append(files, filepath.Join(dir, "keys")) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if runtime.GOOS == "windows" {
			// Windows has no mode bits: Go shows 0666 for a file that is
			// not read-only, 0777 for a directory. Who may read the keys
			// is the ACL the store's directory passes on (docs/platforms.md).
			want = 0o666
			if fi.IsDir() {
				want = 0o777
			}
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// TestHugeBlobClaims stores a pack whose header and trailer claim blobs and
// headers far larger than any real one, and an index file naming a blob of
// 4 GiB: every reader refuses them before allocating.
func TestHugeBlobClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st := newHostileRepo(t)
	r, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey})
	if err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) id.ID {
		pid := id.ID(sha256Sum(data))
		if _, err := st.Put(ctx, repo.PackKey(pid), data, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	t.Run("pack trailer claims a 4 GiB header", func(t *testing.T) {
		p := put(append(bytes.Repeat([]byte{1}, 100), 0xff, 0xff, 0xff, 0xff))
		if _, err := r.ReadPackHeader(ctx, p, 104, 0); !errors.Is(err, pack.ErrCorrupt) {
			t.Fatalf("ReadPackHeader: %v, want pack.ErrCorrupt", err)
		}
	})
	t.Run("pack header claims a 4 GiB blob", func(t *testing.T) {
		hdr := binary.LittleEndian.AppendUint32(nil, 1)
		hdr = append(hdr, byte(pack.DataBlob))
		hdr = append(hdr, make([]byte, 32)...)
		hdr = binary.LittleEndian.AppendUint32(hdr, 0xffffffff)
		sealed, err := r.Key().Seal(nil, hdr)
		if err != nil {
			t.Fatal(err)
		}
		data := append(bytes.Repeat([]byte{2}, 64), sealed...)
		data = binary.LittleEndian.AppendUint32(data, uint32(len(sealed)))
		p := put(data)
		if _, err := r.ReadPackHeader(ctx, p, int64(len(data)), 0); !errors.Is(err, pack.ErrCorrupt) {
			t.Fatalf("ReadPackHeader: %v, want pack.ErrCorrupt", err)
		}
	})
	t.Run("pack shorter than its trailer", func(t *testing.T) {
		p := put([]byte{1, 2})
		if _, err := r.ReadPackHeader(ctx, p, 2, 0); !errors.Is(err, pack.ErrCorrupt) {
			t.Fatalf("ReadPackHeader: %v, want pack.ErrCorrupt", err)
		}
	})
	t.Run("index names a 4 GiB blob", func(t *testing.T) {
		if _, err := sharedWriter(t, r, st).WriteIndex(ctx, []index.PackBlobs{{ID: id.ID{7}, Blobs: []pack.Entry{{Type: pack.DataBlob, ID: id.ID{8}, Length: 0xffffffff}}}}); err != nil {
			t.Fatal(err)
		}
		r2, err := repo.Open(ctx, st, repo.Credentials{PlatformKey: hostileKey})
		if err != nil {
			t.Fatal(err)
		}
		damaged, err := r2.LoadIndex(ctx)
		if err != nil || len(damaged) != 1 || !errors.Is(damaged[0].Err, index.ErrCorrupt) {
			t.Fatalf("LoadIndex: damaged %v, error %v; want the file damaged with index.ErrCorrupt", damaged, err)
		}
		if r2.Index().Has(t.Context(), id.ID{8}) {
			t.Error("the hostile entry was indexed")
		}
	})
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
