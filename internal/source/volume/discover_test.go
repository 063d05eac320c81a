package volume

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestParseMountinfo: the fields of a line, octal escapes undone,
// optional fields (shared:N, master:N) skipped; malformed lines are
// errors naming the line.
func TestParseMountinfo(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []MountinfoEntry
		bad      bool
	}{
		{"plain", "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n",
			[]MountinfoEntry{{Dev: "254:0", Root: "/", Point: "/", FSType: "ext4", Source: "/dev/vda"}}, false},
		{"optional fields and escapes", `41 26 8:17 / /media/me/My\040Photos rw shared:7 master:2 - vfat /dev/sdb1 rw`,
			[]MountinfoEntry{{Dev: "8:17", Root: "/", Point: "/media/me/My Photos", FSType: "vfat", Source: "/dev/sdb1"}}, false},
		{"tab, newline and backslash escapes", `1 2 8:1 /a\011b /m\012n\134o rw - ext4 /dev/x rw`,
			[]MountinfoEntry{{Dev: "8:1", Root: "/a\tb", Point: "/m\nn\\o", FSType: "ext4", Source: "/dev/x"}}, false},
		{"not an escape", `1 2 8:1 / /a\9x rw - ext4 /dev/x rw`,
			[]MountinfoEntry{{Dev: "8:1", Root: "/", Point: `/a\9x`, FSType: "ext4", Source: "/dev/x"}}, false},
		{"blank lines", "\n\n", nil, false},
		{"no separator", "26 1 254:0 / / rw ext4 /dev/vda rw", nil, true},
		{"no source", "26 1 254:0 / / rw - ext4", nil, true},
		{"short", "26 1 254:0 /", nil, true},
		{"no device number", "26 1 x / / rw - ext4 /dev/vda rw", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMountinfo(tc.in)
			if tc.bad {
				if !errors.Is(err, ErrMountinfo) || !strings.Contains(err.Error(), "line 1") && !strings.Contains(err.Error(), " 1:") {
					t.Fatalf("err %v, want ErrMountinfo naming line 1", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestLocalMounts: of the fixture's mounts, the pseudo, network,
// squashfs and overlay ones go; a mount over another hides it.
func TestLocalMounts(t *testing.T) {
	data, err := os.ReadFile("testdata/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := ParseMountinfo(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range LocalMounts(entries) {
		got = append(got, e.Point+" "+e.FSType+" "+e.Source)
	}
	want := []string{"/ ext4 /dev/vda", "/media/me/My Photos vfat /dev/sdb1", "/home btrfs /dev/nvme0n1p2", "/mnt/over ext4 /dev/sdd1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("local mounts\n got %q\nwant %q", got, want)
	}
}

// TestLocal: "/" is a source root whatever its type (a container's
// overlay); elsewhere pseudo and network file systems are not.
func TestLocal(t *testing.T) {
	for _, tc := range []struct {
		point, fsType string
		want          bool
	}{
		{"/", "overlay", true}, {"/", "ext4", true}, {"/data", "xfs", true}, {"/data", "zfs", true},
		{"/x", "overlay", false}, {"/proc", "proc", false}, {"/mnt/nas", "nfs4", false}, {"/run", "tmpfs", false},
	} {
		if got := Local(tc.point, tc.fsType); got != tc.want {
			t.Errorf("Local(%q, %q) = %v, want %v", tc.point, tc.fsType, got, tc.want)
		}
	}
}

// TestUnescapeUdev: udev's \xHH escapes of label links.
func TestUnescapeUdev(t *testing.T) {
	for in, want := range map[string]string{`My\x20Photos`: "My Photos", "plain": "plain", `a\x2fb`: "a/b", `bad\xZZ`: `bad\xZZ`, `end\x2`: `end\x2`, `\x41\x42`: "AB"} {
		if got := UnescapeUdev(in); got != want {
			t.Errorf("UnescapeUdev(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseMountinfo: any input parses or fails with ErrMountinfo, never
// panics; every entry has a device number and a type.
func FuzzParseMountinfo(f *testing.F) {
	if data, err := os.ReadFile("testdata/mountinfo"); err == nil {
		f.Add(string(data))
	}
	f.Add(`41 26 8:17 / /m\040x rw shared:7 - vfat /dev/sdb1 rw`)
	f.Add("1 2 3:4 / / - - - -")
	f.Add(`1 2 3:4 \ \0 - \7 \77`)
	f.Fuzz(func(t *testing.T, in string) {
		entries, err := ParseMountinfo(in)
		if err != nil {
			if !errors.Is(err, ErrMountinfo) {
				t.Fatalf("error %v is not ErrMountinfo", err)
			}
			return
		}
		for _, e := range entries {
			if !strings.Contains(e.Dev, ":") {
				t.Fatalf("entry %+v without a device number", e)
			}
		}
		LocalMounts(entries)
		UnescapeUdev(in)
	})
}
