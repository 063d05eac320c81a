package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/sshconn"
)

// ErrOldSFTPPath marks an sftp:// store where no repository was found at
// the URL's absolute path, but one exists at the same path under the login
// directory, where such URLs pointed before they were read as absolute
// (as Cloudstic's guide reads them).
var ErrOldSFTPPath = errors.New("a repository exists under the login directory, where this URL pointed before")

// withOldSFTPPath adds ErrOldSFTPPath to err, an ErrNoRepository of the
// store o names, when o is an sftp:// URL with a path of one leading slash
// and the old, login-relative reading of that URL finds a repository. err
// is returned as it is otherwise.
func withOldSFTPPath(ctx context.Context, o StoreOptions, err error) error {
	if !errors.Is(err, ErrNoRepository) || !strings.HasPrefix(o.URI, "sftp://") {
		return err
	}
	cfg, p, perr := sshconn.ParseURL(o.URI)
	if perr != nil || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return err // login-relative already, or "//" (absolute in both readings)
	}
	old := o
	old.URI, old.Create, old.Logf, old.TestWrapper = cfg.URL(strings.TrimPrefix(p, "/")), false, nil, nil
	st, oerr := openBackend(ctx, old)
	if oerr != nil {
		return err
	}
	defer st.Close() //nolint:errcheck // a read-only look; err is what is reported
	if _, cerr := repo.ReadConfig(ctx, st); cerr != nil {
		return err
	}
	return fmt.Errorf("%w: %w: use %s", err, ErrOldSFTPPath, old.URI)
}
