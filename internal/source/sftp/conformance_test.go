package sftp

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
)

// TestConformance runs the source suite on the test SFTP server, whose
// data directory is on this machine.
func TestConformance(t *testing.T) {
	_, home := testSource(t)
	sourcetest.Run(t, &sourcetest.DirTree{Base: home,
		NewSource: func(t *testing.T) source.Source { s, _ := testSource(t); return s },
		RootName:  func(dir string) string { return dir }})
}
