package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// userFolder is one of the usual folders of a user's home a workstation
// setup proposes a profile for.
type userFolder struct {
	name string // the profile's name: documents, desktop...
	path string // absolute
}

// xdgFolders are the XDG user directories setup proposes, by their key in
// user-dirs.dirs, with their profile names and default folder names.
var xdgFolders = []struct{ key, name, fallback string }{
	{"XDG_DOCUMENTS_DIR", "documents", "Documents"},
	{"XDG_DESKTOP_DIR", "desktop", "Desktop"},
	{"XDG_PICTURES_DIR", "pictures", "Pictures"},
	{"XDG_MUSIC_DIR", "music", "Music"},
	{"XDG_VIDEOS_DIR", "videos", "Videos"},
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

// xdgUserFolders are the XDG user directories of home: those
// user-dirs.dirs (in $XDG_CONFIG_HOME, else ~/.config) names, else the
// usual names. A directory set to home itself means "disabled" in the
// XDG convention and is left out.
func xdgUserFolders(home string, getenv func(string) string) []userFolder {
	conf := getenv("XDG_CONFIG_HOME")
	if conf == "" {
		conf = filepath.Join(home, ".config")
	}
	dirs := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(conf, "user-dirs.dirs")); err == nil {
		dirs = parseUserDirs(string(b), home)
	}
	var out []userFolder
	for _, x := range xdgFolders {
		p, ok := dirs[x.key]
		if !ok {
			p = filepath.Join(home, x.fallback)
		}
		if p != filepath.Clean(home) {
			out = append(out, userFolder{x.name, p})
		}
	}
	return out
}
