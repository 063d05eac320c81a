package fsmeta

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows's *at system calls: NtCreateFile relative to an open directory,
// as os.Root does on Windows. The name is one checked element, and
// FILE_OPEN_REPARSE_POINT opens a symbolic link or junction itself, never
// its target, so nothing here can leave the output directory.

// openAt opens base in the directory dir with the given access,
// disposition (windows.FILE_OPEN, FILE_CREATE...) and create options,
// never following a reparse point at base. An empty base reopens dir.
func openAt(dir windows.Handle, base string, access, disposition, options uint32) (windows.Handle, error) {
	name, err := windows.NewNTUnicodeString(base)
	if err != nil {
		return 0, err
	}
	oa := windows.OBJECT_ATTRIBUTES{
		Length:        uint32(unsafe.Sizeof(windows.OBJECT_ATTRIBUTES{})),
		RootDirectory: dir,
		ObjectName:    name,
		// Win32 names are case-insensitive: so are these opens.
		Attributes: windows.OBJ_CASE_INSENSITIVE,
	}
	var h windows.Handle
	var iosb windows.IO_STATUS_BLOCK
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, &oa, &iosb, nil, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, disposition,
		options|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if err != nil {
		return 0, ntError(err)
	}
	return h, nil
}

// ntError turns an NTSTATUS into the Win32 error it stands for, which
// errors.Is matches against fs.ErrNotExist, fs.ErrExist and the like.
func ntError(err error) error {
	var st windows.NTStatus
	if errors.As(err, &st) {
		return st.Errno()
	}
	return err
}

// fileBasicInfo is FILE_BASIC_INFO: times in 100 ns ticks since 1601
// (0: leave alone) and the file attributes (0: leave alone).
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// setBasicInfo sets the times and attributes of the open handle h.
func setBasicInfo(h windows.Handle, info *fileBasicInfo) error {
	return windows.SetFileInformationByHandle(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(info)), uint32(unsafe.Sizeof(*info)))
}

// fileTime is Unix nanoseconds as a FILETIME tick count; 0 stays 0 (leave
// the time alone).
func fileTime(ns int64) int64 {
	if ns == 0 {
		return 0
	}
	ft := windows.NsecToFiletime(ns)
	return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime)
}

// fileRenameInformation is FILE_RENAME_INFORMATION with room for a name.
type fileRenameInformation struct {
	ReplaceIfExists uint32 // a BOOLEAN, padded
	RootDirectory   windows.Handle
	FileNameLength  uint32
	FileName        [1]uint16
}

// renameAt renames the open file h to base in the directory dir,
// replacing what is there only when replace is set.
func renameAt(h, dir windows.Handle, base string, replace bool) error {
	name, err := windows.UTF16FromString(base)
	if err != nil {
		return err
	}
	name = name[:len(name)-1] // no terminating NUL: the length says where it ends
	// The buffer is never shorter than the struct: for a one-letter name
	// the name's end falls inside its padding, and a shorter length is
	// STATUS_INVALID_PARAMETER (Wine checks it, as Windows does).
	size := max(int(unsafe.Offsetof(fileRenameInformation{}.FileName))+2*len(name), int(unsafe.Sizeof(fileRenameInformation{})))
	buf := make([]byte, size)
	info := (*fileRenameInformation)(unsafe.Pointer(&buf[0]))
	if replace {
		info.ReplaceIfExists = 1
	}
	info.RootDirectory = dir
	info.FileNameLength = uint32(2 * len(name))
	copy(unsafe.Slice(&info.FileName[0], len(name)), name)
	var iosb windows.IO_STATUS_BLOCK
	return ntError(windows.NtSetInformationFile(h, &iosb, &buf[0], uint32(size), windows.FileRenameInformation))
}
