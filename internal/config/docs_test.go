package config

import (
	"os"
	"strings"
	"testing"
)

// storeTableHeader and profileTableHeader start docs/cli.md's tables of
// store and profile keys.
const (
	storeTableHeader   = "| key | reference key | flag | environment | secret |"
	profileTableHeader = "| key | stands for | meaning |"
)

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// storeTable is the table of store keys docs/cli.md must hold, from
// StoreSettings.
func storeTable() []string {
	rows := []string{storeTableHeader, "|---|---|---|---|---|"}
	for _, t := range StoreSettings {
		key := code(t.Key)
		if t.Extension {
			key += " (extension)"
		}
		var env []string
		for _, e := range t.Env {
			env = append(env, code(e))
		}
		secret := ""
		if t.Secret {
			secret = "yes"
		}
		rows = append(rows, "| "+strings.Join([]string{key, code(t.RefKey), code("-" + t.Flag), strings.Join(env, ", "), secret}, " | ")+" |")
	}
	return rows
}

// profileTable is the table of profile keys docs/cli.md must hold, from
// ProfileKeys.
func profileTable() []string {
	rows := []string{profileTableHeader, "|---|---|---|"}
	for _, k := range ProfileKeys {
		key := code(k.Key)
		if k.Extension {
			key += " (extension)"
		}
		if k.CloudDrive {
			key += " (cloud drive)"
		}
		rows = append(rows, "| "+strings.Join([]string{key, code(k.As), k.Help}, " | ")+" |")
	}
	return rows
}

// TestDocsTablesAreTheSchema: docs/cli.md's tables of the keys of store
// and profile entries are StoreSettings and ProfileKeys, row for row.
func TestDocsTablesAreTheSchema(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	for _, want := range [][]string{storeTable(), profileTable()} {
		var got []string
		for i, l := range lines {
			if l != want[0] {
				continue
			}
			for _, row := range lines[i:] {
				if !strings.HasPrefix(row, "|") {
					break
				}
				got = append(got, row)
			}
			break
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("docs/cli.md's table does not match the schema; it should read:\n%s", strings.Join(want, "\n"))
		}
	}
}
