package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestBackupFlagsDocumented: every flag `cloudstic help backup` lists
// (beyond the global ones) is in the usage line and in docs/cli.md.
func TestBackupFlagsDocumented(t *testing.T) {
	docs, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	global := uxRun(t, "", "help", "version").stdout
	help := uxRun(t, "", "help", "backup").stdout
	usage := ""
	for _, c := range commands() {
		if c.name == "backup" {
			usage = c.usage
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  (-[a-z0-9-]+)`)
	seen := 0
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		name := m[1]
		if strings.Contains(global, "\n  "+name+" ") || strings.Contains(global, "\n  "+name+"\n") {
			continue
		}
		seen++
		if !regexp.MustCompile("[\\s`\\[]" + name + "[\\s`\\]]").Match(docs) {
			t.Errorf("backup flag %s is not in docs/cli.md", name)
		}
		if !strings.Contains(usage, name+" ") && !strings.Contains(usage, name+"]") {
			t.Errorf("backup flag %s is not in the usage line %q", name, usage)
		}
	}
	if seen < 10 {
		t.Errorf("only %d backup flags found in help:\n%s", seen, help)
	}
}
