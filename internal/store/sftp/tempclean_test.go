package sftp

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// TestRemoveStaleTemp plants temp files in the repository directory (the
// server runs on this machine) and checks only the old ones go.
func TestRemoveStaleTemp(t *testing.T) {
	cfg := testConfig(t)
	s := mustOpen(t, cfg)
	storetest.RunTempCleaner(t, s, storetest.PlantIn(t, cfg.Path), storetest.ExistsIn(cfg.Path))
}
