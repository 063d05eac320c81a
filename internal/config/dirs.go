package config

import (
	"errors"
	"path/filepath"
	"runtime"
)

// FileName is the profiles file's name inside the config directory.
const FileName = "profiles.yaml"

// ErrNoConfigDir means neither CLOUDSTIC_CONFIG_DIR nor a home directory
// says where the config directory is.
var ErrNoConfigDir = errors.New("cannot tell the config directory: set CLOUDSTIC_CONFIG_DIR (or HOME)")

// Dir returns the config directory: CLOUDSTIC_CONFIG_DIR, else the
// platform's (Linux: $XDG_CONFIG_HOME/cloudstic or ~/.config/cloudstic;
// macOS: ~/Library/Application Support/cloudstic; Windows:
// %AppData%\cloudstic).
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("CLOUDSTIC_CONFIG_DIR"); d != "" {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := getenv("AppData"); d != "" {
			return filepath.Join(d, "cloudstic"), nil
		}
	case "darwin":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Application Support", "cloudstic"), nil
		}
	default:
		if d := getenv("XDG_CONFIG_HOME"); d != "" {
			return filepath.Join(d, "cloudstic"), nil
		}
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".config", "cloudstic"), nil
		}
	}
	return "", ErrNoConfigDir
}

// ProfilesPath returns the profiles file's path: explicit when given
// (-profiles-file), else CLOUDSTIC_PROFILES_FILE, else profiles.yaml in the
// config directory.
func ProfilesPath(explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p := getenv("CLOUDSTIC_PROFILES_FILE"); p != "" {
		return p, nil
	}
	dir, err := Dir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, FileName), nil
}
