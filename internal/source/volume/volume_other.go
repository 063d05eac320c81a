//go:build !linux

package volume

import "context"

// Locate reports ErrUnsupported: see volume_linux.go.
func (s System) Locate(string) (Volume, error) { return Volume{}, ErrUnsupported }

// UUID reports ErrUnsupported: see volume_linux.go.
func (s System) UUID(context.Context, string) (string, Kind, error) { return "", "", ErrUnsupported }
