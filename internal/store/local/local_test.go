package local

import (
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return New(t.TempDir()) })
}

func TestRemoveStaleTemp(t *testing.T) {
	dir := t.TempDir()
	storetest.RunTempCleaner(t, New(dir), storetest.PlantIn(t, dir), storetest.ExistsIn(dir))
}
