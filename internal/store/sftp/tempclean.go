package sftp

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/store"
)

var _ store.TempCleaner = (*Store)(nil)

// RemoveStaleTemp deletes temp files (".tmp-*", left when a connection or
// the process died between writing and linking or renaming) last modified
// before cutoff, by the server's clock.
func (s *Store) RemoveStaleTemp(ctx context.Context, cutoff time.Time) (int, error) {
	return s.removeStaleTemp(ctx, s.root, cutoff)
}

func (s *Store) removeStaleTemp(ctx context.Context, dir string, cutoff time.Time) (int, error) {
	var entries []os.FileInfo
	err := s.do(ctx, func(c *sftp.Client) error {
		var err error
		entries, err = c.ReadDirContext(ctx, dir)
		return err
	})
	if isNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", dir, err)
	}
	removed := 0
	for _, fi := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		p := path.Join(dir, fi.Name())
		switch {
		case fi.IsDir() && !strings.HasPrefix(fi.Name(), "."):
			n, err := s.removeStaleTemp(ctx, p, cutoff)
			removed += n
			if err != nil {
				return removed, err
			}
		case fi.Mode().IsRegular() && strings.HasPrefix(fi.Name(), ".tmp-") && fi.ModTime().Before(cutoff):
			err := s.do(ctx, func(c *sftp.Client) error { return c.Remove(p) })
			if err != nil && !isNotExist(err) {
				return removed, fmt.Errorf("remove %s: %w", p, err)
			}
			removed++
		}
	}
	return removed, nil
}
