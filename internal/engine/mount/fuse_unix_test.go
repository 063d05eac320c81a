//go:build linux || freebsd

package mount_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/mount"
)

func TestCheckDevice(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fuse")
	must(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		dev  string
		want error
	}{
		{mount.DevFuse, nil},
		{filepath.Join(t.TempDir(), "missing"), mount.ErrNoFuse},
		{file, mount.ErrNoFuse},
	}
	for _, tc := range tests {
		t.Run(tc.dev, func(t *testing.T) {
			if err := mount.CheckDevice(tc.dev); !errors.Is(err, tc.want) {
				t.Errorf("CheckDevice(%s) = %v, want %v", tc.dev, err, tc.want)
			}
		})
	}
}
