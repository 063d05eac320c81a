package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompatCat: cat -json prints Cloudstic's array of {"key", "data"},
// one element per object asked for (several in one run); without -json
// each object is pretty JSON, with "==> KEY <==" headers on stderr when
// there are several; -raw prints them unindented; -raw with -json is a
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

	raw := uxOK(t, dir, "cat", "-raw", "snapshot", ids[0]).stdout
	if strings.Contains(raw, "\n") || !json.Valid([]byte(raw)) {
		t.Errorf("-raw: %q", raw)
	}

	for _, args := range [][]string{{"cat", "-raw", "-json", "config"}, {"cat", "snapshot"}, {"cat", "config", "x"}, {"cat", "snapshot/"}} {
		if r := uxRun(t, dir, args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, r.code, ExitUsage, r.stderr)
		}
	}
}
