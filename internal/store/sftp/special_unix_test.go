//go:build unix

package sftp

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// TestSpecialFiles plants a symbolic link to /dev/zero, a FIFO and a link
// to a file outside in the repository directory (the server runs on this
// machine): Get and Stat refuse each with store.ErrNotRegular at once.
func TestSpecialFiles(t *testing.T) {
	cfg := testConfig(t)
	storetest.RunSpecialFiles(t, mustOpen(t, cfg), cfg.Path, false)
}
