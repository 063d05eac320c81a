//go:build !linux && !darwin && !freebsd && !windows

package volume

import "context"

// Discover reports ErrDiscoverUnsupported: see discover_linux.go,
// discover_bsd.go and discover_windows.go for the platforms that can.
func (s System) Discover(context.Context) ([]Mount, error) { return nil, ErrDiscoverUnsupported }
