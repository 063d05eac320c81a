package winpath

import (
	"path/filepath"
	"strings"
)

// Long is p in the \\?\ form that lifts the 260-character limit of
// MAX_PATH, as the os package does for its own calls; it is for calls
// that are not the os package's (CreateFile, MoveFileEx). Only an
// absolute path can take the form, and it must be clean (no "." or ".."
// elements, only backslashes), which filepath.Abs makes it. Short paths
// are returned as they are.
func Long(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\?\`) {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p // the call then fails on p as given, and says so
	}
	if strings.HasPrefix(abs, `\\`) { // UNC: \\server\share\...
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}
