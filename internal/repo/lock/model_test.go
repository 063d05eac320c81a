package lock

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSpinModel runs docs/lock/check.sh: spin must verify mutual exclusion
// for the protocol's variants and find a counterexample for the seed's
// reference ordering.
func TestSpinModel(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("spin"); err != nil {
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skip("spin not installed (CLOUDSTIC_TEST_NO_SERVERS=1)")
		}
		t.Fatal("spin not found: install the Debian package spin (apt-get install spin), or set CLOUDSTIC_TEST_NO_SERVERS=1 to skip")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "docs", "lock", "check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", script).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}
