package winpath

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLong(t *testing.T) {
	cwd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`\abcdefghij`, 30) // 330 characters
	cases := []struct {
		name, in, want string
	}{
		{"short path as it is", `C:\Users\me\file.txt`, `C:\Users\me\file.txt`},
		{"long drive path", `C:` + deep, `\\?\C:` + deep},
		{"long path cleaned", `C:` + deep + `\..\x`, `\\?\C:` + deep[:len(deep)-len(`\abcdefghij`)] + `\x`},
		{"long UNC path", `\\server\share` + deep, `\\?\UNC\server\share` + deep},
		{"already long", `\\?\C:` + deep, `\\?\C:` + deep},
		{"long relative path made absolute", `rel` + deep, `\\?\` + cwd + `\rel` + deep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Long(c.in); got != c.want {
				t.Errorf("Long(%q)\n = %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}
