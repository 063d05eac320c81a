package local_test

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/internal/source/local"
	"github.com/cloudstic/cloudstic/internal/source/sourcetest"
)

// TestConformance runs the source suite on the local file system.
func TestConformance(t *testing.T) {
	t.Parallel()
	sourcetest.Run(t, &sourcetest.DirTree{Base: t.TempDir(), NewSource: func(*testing.T) source.Source { return local.New() }})
}
