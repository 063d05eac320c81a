package exclude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source/local"
)

// entry runs f.Entry on the entry name of dir.
func entry(t *testing.T, f *Filter, dir, rel, name string) Decision {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range des {
		if d.Name() == name {
			dec, _, err := f.Entry(context.Background(), dir, rel, d)
			if err != nil {
				t.Fatal(err)
			}
			return dec
		}
	}
	t.Fatalf("no entry %s in %s", name, dir)
	return Keep
}

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilterEntry(t *testing.T) {
	root := t.TempDir()
	mkfile(t, filepath.Join(root, "tagged", ".nobackup"), "")
	mkfile(t, filepath.Join(root, "cache", CacheDirTag), cacheDirSignature+"\n# made by a test\n")
	mkfile(t, filepath.Join(root, "badsig", CacheDirTag), "Signature: not the right one")
	mkfile(t, filepath.Join(root, "short", CacheDirTag), "Signature")
	if err := os.MkdirAll(filepath.Join(root, "tagdir", CacheDirTag), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(root, "big"), "0123456789a")
	mkfile(t, filepath.Join(root, "ten"), "0123456789")
	mkfile(t, filepath.Join(root, "plain", "x"), "")
	fi, err := os.Lstat(root)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{IfPresent: []string{".nobackup"}, Caches: true, LargerThan: 10, Patterns: []string{"plain/"}}
	f, err := NewFilter(opts, local.New(), fi)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want Decision
	}{
		{"tagged", Skip}, {"cache", Skip}, {"badsig", Keep}, {"short", Keep}, {"tagdir", Keep},
		{"big", Skip}, {"ten", Keep}, {"plain", Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := entry(t, f, root, tt.name, tt.name); got != tt.want {
				t.Errorf("Entry(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
	t.Run("without the options", func(t *testing.T) {
		f, err := NewFilter(Options{}, local.New(), fi)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			if got := entry(t, f, root, tt.name, tt.name); got != Keep {
				t.Errorf("Entry(%s) = %v with no rules, want Keep", tt.name, got)
			}
		}
	})
}
