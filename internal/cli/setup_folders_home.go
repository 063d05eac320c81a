//go:build darwin || windows

package cli

import "path/filepath"

// homeFolders are the named folders of home, for the systems whose
// usual folders have fixed names (macOS, Windows).
func homeFolders(home string, names [][2]string) []userFolder {
	out := make([]userFolder, 0, len(names))
	for _, n := range names {
		out = append(out, userFolder{n[0], filepath.Join(home, n[1])})
	}
	return out
}
