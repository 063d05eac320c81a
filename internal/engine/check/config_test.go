package check_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
)

// editConfig rewrites the config file of the local store in dir with fn.
func editConfig(t *testing.T, dir string, fn func(m map[string]any)) {
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
	fn(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckConfigBinding: check verifies the config's MAC again (a config
// edited after the repository was opened is an error), and says how to
// bind a config written before configs had a MAC.
func TestCheckConfigBinding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		beforeOpen func(m map[string]any) // nil: none
		afterOpen  func(m map[string]any) // nil: none
		wantErr    string
		wantNote   string
	}{
		{name: "bound"},
		{name: "no MAC", beforeOpen: func(m map[string]any) { delete(m, "mac") }, wantNote: "repair config"},
		{name: "edited after the open", afterOpen: func(m map[string]any) { m["pack_size"] = 2 << 20 }, wantErr: "fails authentication"},
		{name: "MAC removed after the open", afterOpen: func(m map[string]any) { delete(m, "mac") }, wantNote: "repair config"},
		{name: "encryption switched off after the open", afterOpen: func(m map[string]any) {
			m["encrypted"] = false
			m["chunker_key"] = strings.Repeat("00", 32)
			delete(m, "mac")
		}, wantErr: "from encrypted true to false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := checktest.NewRepo(t, dir)
			if tc.beforeOpen != nil {
				editConfig(t, dir, tc.beforeOpen)
			}
			r := checktest.Open(t, st)
			if tc.afterOpen != nil {
				editConfig(t, dir, tc.afterOpen)
			}
			res, err := check.Run(context.Background(), r, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var errs, notes []string
			for _, p := range res.Errors {
				if p.Key == repo.ConfigKey {
					errs = append(errs, p.String())
				}
			}
			for _, p := range res.Notes {
				if p.Key == repo.ConfigKey {
					notes = append(notes, p.String())
				}
			}
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.wantErr)) {
				t.Errorf("config errors %q, want one containing %q", errs, tc.wantErr)
			}
			if tc.wantNote == "" && len(notes) > 0 || tc.wantNote != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.wantNote)) {
				t.Errorf("config notes %q, want one containing %q", notes, tc.wantNote)
			}
			if tc.wantErr != "" && !strings.HasPrefix(errs[0], "["+check.KindCorrupt+"]") {
				t.Errorf("%q is not reported as damage", errs[0])
			}
		})
	}
}
