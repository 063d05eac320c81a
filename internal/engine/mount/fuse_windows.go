package mount

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
)

// ErrUnsupported means the platform cannot mount a repository: Windows
// has no FUSE (WinFsp would be a different file system API).
var ErrUnsupported = fmt.Errorf("%w: mount is not supported on Windows (use restore, dump or the web UI)", errors.ErrUnsupported)

// DevFuse is empty: Windows has no FUSE device.
const DevFuse = ""

// CheckDevice reports ErrUnsupported.
func CheckDevice(string) error { return ErrUnsupported }

// Serve reports ErrUnsupported.
func Serve(context.Context, *repo.Repository, string, Options) error { return ErrUnsupported }
