//go:build unix

package local

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	storetest.RunSpecialFiles(t, New(dir), dir, true)
}
