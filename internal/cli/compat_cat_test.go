package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// compatStored is the plaintext of the object at key in dir's unencrypted
// local store: its file decoded by its encoding byte (0 as is, 1 zstd),
// as docs/format.md describes the stored form.
func compatStored(t *testing.T, dir, key string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "store", filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	if key == "config" {
		return data // plain JSON, never sealed
	}
	switch {
	case len(data) > 0 && data[0] == 0: // stored as is
		return data[1:]
	case len(data) > 0 && data[0] == 1: // zstd
		dec, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		plain, err := dec.DecodeAll(data[1:], nil)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return plain
	}
	t.Fatalf("%s: unexpected encoding byte %v", key, data[:min(1, len(data))])
	return nil
}

// TestCompatCat: cat -json prints Cloudstic's array of {"key", "data"},
// one element per object asked for (several in one run); without -json
// each object is pretty JSON, with "==> KEY <==" headers on stderr when
// there are several; -raw prints the bytes the repository stores; -raw with -json is a
// usage error.
func TestCompatCat(t *testing.T) {
	dir := t.TempDir()
	_, ids := compatRepo(t, dir, 1)

	var docs []struct {
		Key  string          `json:"key"`
		Data json.RawMessage `json:"data"`
	}
	uxJSON(t, uxOK(t, dir, "cat", "-json", "config").stdout, &docs)
	var cfg map[string]any
	if len(docs) != 1 || docs[0].Key != "config" || json.Unmarshal(docs[0].Data, &cfg) != nil || cfg["id"] == nil {
		t.Fatalf("cat -json config = %+v", docs)
	}

	uxJSON(t, uxOK(t, dir, "cat", "-json", "config", "snapshot/"+ids[0], "snapshot", "latest").stdout, &docs)
	wantKeys := []string{"config", "snapshot/" + ids[0], "snapshot/latest"}
	if len(docs) != len(wantKeys) {
		t.Fatalf("%d objects, want %d", len(docs), len(wantKeys))
	}
	var snap struct {
		ID       string `json:"id"`
		Snapshot struct {
			Tree string `json:"tree"`
		} `json:"snapshot"`
	}
	for i, d := range docs {
		if d.Key != wantKeys[i] {
			t.Errorf("object %d: key %q, want %q", i, d.Key, wantKeys[i])
		}
	}
	if err := json.Unmarshal(docs[2].Data, &snap); err != nil || snap.ID != ids[0] || snap.Snapshot.Tree == "" {
		t.Fatalf("snapshot data %s: %v", docs[2].Data, err)
	}

	r := uxOK(t, dir, "cat", "config", "tree", snap.Snapshot.Tree)
	if strings.Count(r.stderr, "==> ") != 2 || !strings.Contains(r.stderr, "==> tree/"+snap.Snapshot.Tree+" <==") {
		t.Errorf("headers on stderr: %q", r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for n := 0; ; n++ {
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			if n != 2 {
				t.Errorf("stdout holds %d JSON objects, want 2: %v\n%s", n, err, r.stdout)
			}
			break
		}
	}

	// -raw prints each object's bytes as the repository holds them
	// (decrypted; this repository is not encrypted), nothing added: a
	// script hashes them.
	rawTests := []struct {
		name string
		args []string
		want func(t *testing.T) []byte
	}{
		{"config", []string{"config"}, func(t *testing.T) []byte { return compatStored(t, dir, "config") }},
		{"snapshot", []string{"snapshot", ids[0]}, func(t *testing.T) []byte { return compatStored(t, dir, "snapshots/"+ids[0]) }},
		{"several", []string{"config", "snapshot/" + ids[0]}, func(t *testing.T) []byte {
			return append(compatStored(t, dir, "config"), compatStored(t, dir, "snapshots/"+ids[0])...)
		}},
	}
	for _, tc := range rawTests {
		t.Run("raw "+tc.name, func(t *testing.T) {
			if got, want := uxOK(t, dir, append([]string{"cat", "-raw"}, tc.args...)...).stdout, tc.want(t); got != string(want) {
				t.Errorf("cat -raw %v:\n%q\nwant the stored bytes\n%q", tc.args, got, want)
			}
		})
	}
	// A tree lives in a pack: its raw bytes are the blob its id names.
	tr := uxOK(t, dir, "cat", "-raw", "tree", snap.Snapshot.Tree).stdout
	if sum := sha256.Sum256([]byte(tr)); hex.EncodeToString(sum[:]) != snap.Snapshot.Tree {
		t.Errorf("cat -raw tree: bytes hash to %x, not the tree id %s", sum, snap.Snapshot.Tree)
	}

	for _, args := range [][]string{{"cat", "-raw", "-json", "config"}, {"cat", "snapshot"}, {"cat", "config", "x"}, {"cat", "snapshot/"}} {
		if r := uxRun(t, dir, args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, r.code, ExitUsage, r.stderr)
		}
	}
}
