package backup_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// TestEncryptionAudit backs up a tree with distinctive names, contents,
// link targets, tags and host name into an encrypted repository, then
// reads every stored object: none holds any of them in plaintext, and no
// AES-GCM nonce is used twice across all sealed blobs, pack headers, index
// files, snapshots and key slots.
func TestEncryptionAudit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := checktest.NewRepo(t, dir)
	src := filepath.Join(t.TempDir(), "Zanzibar-source-dir")
	secrets := []string{"Zanzibar-source-dir", "quetzalcoatl-host", "tag-periwinkle", "link-target-xylophone"}
	for i := 0; i < 600; i++ {
		name := fmt.Sprintf("dir-marmalade-%d/file-aardvark-%03d.txt", i%10, i)
		content := strings.Repeat(fmt.Sprintf("content-platypus-%03d ", i), 20+i%100)
		checktest.WriteFile(t, src, name, uint64(i), 10) // creates the directory
		if err := os.WriteFile(filepath.Join(src, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, fmt.Sprintf("file-aardvark-%03d", i), fmt.Sprintf("content-platypus-%03d", i))
	}
	secrets = append(secrets, "dir-marmalade-")
	if err := os.Symlink("link-target-xylophone", filepath.Join(src, "link-wombat")); err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, "link-wombat")
	for round := 0; round < 3; round++ {
		checktest.WriteFile(t, src, fmt.Sprintf("round-%d.bin", round), uint64(1000+round), 300<<10)
		r := checktest.Open(t, st)
		if _, err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		heads, _, err := r.SnapshotHeads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := backup.Run(ctx, checktest.Writer(t, st, r), heads, backup.Options{Path: src, Hostname: "quetzalcoatl-host", Tags: []string{"tag-periwinkle"}})
		if err != nil || len(res.Errors) > 0 {
			t.Fatalf("backup: %v %v", err, res)
		}
	}
	objects := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		objects++
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q in plaintext", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	nonces := collectNonces(t, dir)
	seen := make(map[string]bool, len(nonces))
	for _, n := range nonces {
		if seen[n] {
			t.Errorf("nonce %x used twice", n)
		}
		seen[n] = true
	}
	if len(nonces) < 500 {
		t.Errorf("only %d sealed objects checked", len(nonces))
	}
	t.Logf("%d objects, %d nonces", objects, len(nonces))
}

// collectNonces returns the nonce of every sealed thing in the store at dir.
func collectNonces(t *testing.T, dir string) []string {
	t.Helper()
	ctx := context.Background()
	r := checktest.Open(t, local.New(dir))
	var nonces []string
	add := func(sealed []byte) {
		if len(sealed) < crypt.Overhead {
			t.Fatalf("sealed object of %d bytes", len(sealed))
		}
		nonces = append(nonces, string(sealed[:12]))
	}
	packs, _, err := r.ListObjects(ctx, repo.DataPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(repo.PackKey(p.ID))))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := r.ReadPackHeader(ctx, p.ID, int64(len(data)), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			add(data[e.Offset : e.Offset+e.Length])
		}
		n := binary.LittleEndian.Uint32(data[len(data)-4:])
		add(data[len(data)-4-int(n):])
	}
	for _, prefix := range []string{repo.IndexPrefix, repo.SnapshotPrefix} {
		ids, _, err := r.ListIDs(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range ids {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(prefix+i.String())))
			if err != nil {
				t.Fatal(err)
			}
			add(data)
		}
	}
	slots, err := filepath.Glob(filepath.Join(dir, "keys", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slots {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s crypt.Slot
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		add(s.Wrapped)
	}
	return nonces
}
