//go:build !darwin && !windows

package cli

import (
	"errors"
	"os"
	"path/filepath"
)

// errNoHome means the user's home directory is not known.
var errNoHome = errors.New("cannot tell the home directory: set HOME")

// userFolders are the usual folders on Linux and the BSDs: the XDG user
// directories.
func userFolders(getenv func(string) string) ([]userFolder, error) {
	home := getenv("HOME")
	if home == "" {
		return nil, errNoHome
	}
	return xdgUserFolders(home, getenv), nil
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
