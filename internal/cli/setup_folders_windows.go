package cli

import "errors"

// errNoHome means the user's profile directory is not known.
var errNoHome = errors.New("cannot tell the user's profile directory: set USERPROFILE")

// userFolders are the usual folders of a Windows user profile. (Folders
// redirected elsewhere, to OneDrive for one, are not followed: the known
// folder API is not asked.)
func userFolders(getenv func(string) string) ([]userFolder, error) {
	home := getenv("USERPROFILE")
	if home == "" {
		return nil, errNoHome
	}
	return homeFolders(home, [][2]string{{"documents", "Documents"}, {"desktop", "Desktop"}, {"pictures", "Pictures"}, {"music", "Music"}, {"videos", "Videos"}}), nil
}
