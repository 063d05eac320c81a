package cli

import (
	"path/filepath"
	"strings"
)

// userFolder is one of the usual folders of a user's home a workstation
// setup proposes a profile for.
type userFolder struct {
	name string // the profile's name: documents, desktop...
	path string // absolute
}

// parseUserDirs reads xdg-user-dirs' user-dirs.dirs: lines
// XDG_NAME_DIR="$HOME/Folder" or ="/absolute/path", # comments. $HOME
// is replaced by home; backslash escapes are undone. A line of another
// form is ignored, as xdg-user-dirs does.
func parseUserDirs(text, home string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") || !strings.HasPrefix(key, "XDG_") {
			continue
		}
		if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
			continue
		}
		val = unescapeShell(val[1 : len(val)-1])
		switch {
		case val == "$HOME":
			val = home
		case strings.HasPrefix(val, "$HOME/"):
			val = filepath.Join(home, val[len("$HOME/"):])
		case !strings.HasPrefix(val, "/"):
			continue // the file allows only $HOME/... or absolute paths
		}
		out[key] = filepath.Clean(val)
	}
	return out
}

// unescapeShell undoes the backslash escapes of a double-quoted shell
// word.
func unescapeShell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
