package cli

import (
	"reflect"
	"testing"
)

// TestParseUserDirs: $HOME substituted, escapes undone, comments and
// lines of other forms ignored, relative paths refused.
func TestParseUserDirs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
	}{
		{"home relative", `XDG_DOCUMENTS_DIR="$HOME/Documents"`, map[string]string{"XDG_DOCUMENTS_DIR": "/home/me/Documents"}},
		{"absolute", `XDG_PICTURES_DIR="/data/pics/"`, map[string]string{"XDG_PICTURES_DIR": "/data/pics"}},
		{"home itself", `XDG_MUSIC_DIR="$HOME/"`, map[string]string{"XDG_MUSIC_DIR": "/home/me"}},
		{"escapes", `XDG_DESKTOP_DIR="$HOME/My \"Desk\""`, map[string]string{"XDG_DESKTOP_DIR": `/home/me/My "Desk"`}},
		{"comment and junk", "# XDG_X_DIR=\"$HOME/x\"\nnot a line\nXDG_Y_DIR=$HOME/unquoted\nOTHER=\"/x\"", map[string]string{}},
		{"relative refused", `XDG_VIDEOS_DIR="Videos"`, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseUserDirs(tc.in, "/home/me"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParseUserDirs: any file parses without a panic, to absolute paths.
func FuzzParseUserDirs(f *testing.F) {
	f.Add("XDG_DOCUMENTS_DIR=\"$HOME/Documents\"\n# c\nXDG_X_DIR=\"/a\\\\b\"\n")
	f.Add(`XDG_A="\"`)
	f.Fuzz(func(t *testing.T, in string) {
		for k, v := range parseUserDirs(in, "/home/me") {
			if len(v) == 0 || v[0] != '/' {
				t.Fatalf("%s: %q is not absolute", k, v)
			}
		}
	})
}
