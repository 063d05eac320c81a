package cli

import "errors"

// errNoHome means the user's home directory is not known.
var errNoHome = errors.New("cannot tell the home directory: set HOME")

// userFolders are the usual folders of a macOS home.
func userFolders(getenv func(string) string) ([]userFolder, error) {
	home := getenv("HOME")
	if home == "" {
		return nil, errNoHome
	}
	return homeFolders(home, [][2]string{{"documents", "Documents"}, {"desktop", "Desktop"}, {"pictures", "Pictures"}, {"music", "Music"}, {"movies", "Movies"}}), nil
}
