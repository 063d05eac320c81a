//go:build linux

package restore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
)

// fileCapability is a security.capability value (vfs_cap_data revision 2)
// granting cap_net_bind_service, effective.
func fileCapability() []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|1) // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	binary.LittleEndian.PutUint32(b[4:], 1<<unix.CAP_NET_BIND_SERVICE)
	return b
}

// TestRestorePrivileges backs up a setuid file, a setgid file, a setgid
// and sticky directory and, as root, a device node and a file with a
// capability; a restore gives them back and counts them, and -no-setuid,
// -no-devices, -no-capabilities withhold them (the directory's bits
// stay) and count that. Run as root (CI), it checks the root path for
// real; otherwise what a user can make: the setuid bits.
func TestRestorePrivileges(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	src := t.TempDir()
	write := func(name string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("suid", 0o755|os.ModeSetuid)
	write("sgid", 0o755|os.ModeSetgid)
	write("plain", 0o644)
	shared := filepath.Join(src, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	want := fsmeta.PrivilegeCounts{SetuidFiles: 2}
	if root {
		if err := unix.Mknod(filepath.Join(src, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		write("capped", 0o755)
		if err := unix.Setxattr(filepath.Join(src, "capped"), "security.capability", fileCapability(), 0); err != nil {
			t.Fatalf("setcap: %v", err)
		}
		want.DeviceNodes, want.Capabilities = 1, 1
	}
	st := checktest.NewRepo(t, t.TempDir())
	sid := checktest.Backup(t, st, src)

	for _, tc := range []struct {
		name     string
		withhold bool
	}{{"as recorded", false}, {"withheld", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := checktest.Open(t, st)
			if _, err := r.LoadIndex(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := r.LoadSnapshot(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			res, err := restore.Run(ctx, r, checktest.Lease(t, st), s.Tree, restore.Options{Output: out, Format: restore.FormatDir, Warnf: t.Logf,
				NoSetuid: tc.withhold, NoDevices: tc.withhold, NoCapabilities: tc.withhold})
			if err != nil {
				t.Fatal(err)
			}
			got, gotWithheld := res.Privileges.Restored, res.Privileges.Withheld
			wantRestored, wantWithheld := want, fsmeta.PrivilegeCounts{}
			if tc.withhold {
				wantRestored, wantWithheld = wantWithheld, wantRestored
			}
			if got != wantRestored || gotWithheld != wantWithheld {
				t.Errorf("restored %+v, withheld %+v; want %+v, %+v", got, gotWithheld, wantRestored, wantWithheld)
			}

			for name, bits := range map[string]os.FileMode{"suid": os.ModeSetuid, "sgid": os.ModeSetgid} {
				fi, err := os.Stat(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				if has := fi.Mode()&bits != 0; has == tc.withhold {
					t.Errorf("%s restored with mode %v", name, fi.Mode())
				}
				if fi.Mode().Perm() != 0o755 {
					t.Errorf("%s lost its permission bits: %v", name, fi.Mode())
				}
			}
			if fi, err := os.Stat(filepath.Join(out, "shared")); err != nil || fi.Mode()&(os.ModeSetgid|os.ModeSticky) != os.ModeSetgid|os.ModeSticky {
				t.Errorf("the shared directory's setgid and sticky bits: %v (%v), want both kept", fi.Mode(), err)
			}
			if !root {
				return
			}
			fi, err := os.Lstat(filepath.Join(out, "null"))
			switch {
			case tc.withhold && !errors.Is(err, os.ErrNotExist):
				t.Errorf("-no-devices restored the device node (%v)", err)
			case !tc.withhold && (err != nil || fi.Mode()&os.ModeCharDevice == 0):
				t.Errorf("the device node was not restored: %v", err)
			}
			buf := make([]byte, 64)
			n, err := unix.Getxattr(filepath.Join(out, "capped"), "security.capability", buf)
			switch {
			case tc.withhold && !errors.Is(err, unix.ENODATA):
				t.Errorf("-no-capabilities restored security.capability (%d bytes, %v)", n, err)
			case !tc.withhold && (err != nil || string(buf[:n]) != string(fileCapability())):
				t.Errorf("security.capability not restored: %v", err)
			}
		})
	}
}
