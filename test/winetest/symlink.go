package winetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// SkipWithoutSymlinks skips t unless a symbolic link made here is one: it
// makes one in a temporary directory and looks at it.
func SkipWithoutSymlinks(t testing.TB) {
	t.Helper()
	link := filepath.Join(t.TempDir(), "probe")
	err := os.Symlink(".", link)
	if err == nil {
		fi, lerr := os.Lstat(link)
		if lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return
		}
		err = lerr
	}
	t.Skipf("symbolic links cannot be made here (%v): Wine 8 makes none, Windows needs Developer Mode or elevation", err)
}
