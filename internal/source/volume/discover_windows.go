package volume

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sys/windows"
)

// Discover lists the drive letters of fixed and removable drives
// (GetLogicalDrives, GetDriveType): network, optical and RAM drives are
// left out. The UUID is the volume's GUID (from its \\?\Volume{GUID}\
// name), the label and file system type GetVolumeInformation's. A drive
// with no medium (an empty card reader) is skipped.
func (s System) Discover(ctx context.Context) ([]Mount, error) {
	mask, err := windows.GetLogicalDrives()
	if err != nil {
		return nil, fmt.Errorf("volume: GetLogicalDrives: %w", err)
	}
	out := []Mount{}
	for i := 0; i < 26; i++ {
		if mask&(1<<i) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		root := string(rune('A'+i)) + `:\`
		root16, err := windows.UTF16PtrFromString(root)
		if err != nil {
			return nil, err
		}
		kind := windows.GetDriveType(root16)
		if kind != windows.DRIVE_FIXED && kind != windows.DRIVE_REMOVABLE {
			continue
		}
		label := make([]uint16, windows.MAX_PATH+1)
		fsName := make([]uint16, windows.MAX_PATH+1)
		if err := windows.GetVolumeInformation(root16, &label[0], uint32(len(label)), nil, nil, nil, &fsName[0], uint32(len(fsName))); err != nil {
			continue // no medium in the drive
		}
		m := Mount{MountPoint: root, Device: root, FSType: windows.UTF16ToString(fsName), Label: windows.UTF16ToString(label),
			Portable: kind == windows.DRIVE_REMOVABLE}
		guid := make([]uint16, 50)
		if err := windows.GetVolumeNameForVolumeMountPoint(root16, &guid[0], uint32(len(guid))); err == nil {
			m.Device = windows.UTF16ToString(guid)
			m.UUID = volumeGUID(m.Device)
		}
		out = append(out, m)
	}
	return out, nil
}

// volumeGUID is the GUID of a volume name \\?\Volume{GUID}\, lower case,
// or "" for another form.
func volumeGUID(name string) string {
	g, ok := strings.CutPrefix(name, `\\?\Volume{`)
	if g, ok2 := strings.CutSuffix(g, `}\`); ok && ok2 {
		return strings.ToLower(g)
	}
	return ""
}
