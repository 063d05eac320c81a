//go:build !darwin && !windows

package cli

import "errors"

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
