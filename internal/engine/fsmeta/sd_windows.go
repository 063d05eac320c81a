package fsmeta

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/cloudstic/cloudstic/internal/winpath"
)

// The privileges that widen what of a security descriptor the process
// may read and set: the SACL (auditing) needs SeSecurityPrivilege, an
// owner or group other than the process's own user needs
// SeRestorePrivilege. An elevated administrator holds both, disabled
// until asked for.
const (
	securityPrivilege = "SeSecurityPrivilege"
	restorePrivilege  = "SeRestorePrivilege"
)

// sdCapture is a Capturer's state for security descriptors.
type sdCapture struct {
	once   sync.Once
	sacl   bool        // SeSecurityPrivilege is enabled: the SACL is read
	warned atomic.Bool // one warning of an unreadable descriptor given
}

// read returns the SDDL of the local entry at path (the entry itself,
// never a link's target), or "" when the process may not read it: the
// backup goes on, and the first such entry is reported through warnf.
// It costs one open of the entry, for READ_CONTROL only.
func (s *sdCapture) read(path string, warnf func(string, ...any)) string {
	s.once.Do(func() { s.sacl = enablePrivilege(securityPrivilege) })
	sddl, err := readSDDL(path, s.sacl)
	if err != nil && s.sacl {
		sddl, err = readSDDL(path, false)
	}
	if err != nil {
		if warnf != nil && s.warned.CompareAndSwap(false, true) {
			warnf("%s: security descriptor not read (%v): it and any other the process may not read are backed up without one", path, err)
		}
		return ""
	}
	return sddl
}

// readSDDL reads the owner, group, DACL and, with sacl, the SACL of the
// entry at path, without following a final link or junction.
func readSDDL(path string, sacl bool) (string, error) {
	p, err := windows.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return "", err
	}
	access := uint32(windows.READ_CONTROL)
	info := windows.SECURITY_INFORMATION(windows.OWNER_SECURITY_INFORMATION | windows.GROUP_SECURITY_INFORMATION | windows.DACL_SECURITY_INFORMATION)
	if sacl {
		access |= windows.ACCESS_SYSTEM_SECURITY
		info |= windows.SACL_SECURITY_INFORMATION
	}
	// READ_CONTROL reads no data: no share mode of another process's
	// open refuses it.
	h, err := windows.CreateFile(p, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer windows.CloseHandle(h) //nolint:errcheck // read only: nothing to flush
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, info)
	if err != nil {
		return "", fmt.Errorf("GetSecurityInfo: %w", err)
	}
	return sd.String(), nil
}

// sdRestore is a Writer's state for security descriptors.
type sdRestore struct {
	once   sync.Once
	rights sdRights
}

// sdRights returns what the Writer may set beyond a DACL, enabling the
// privileges it needs on first use.
func (w *Writer) sdRights() sdRights {
	w.sd.once.Do(func() {
		w.sd.rights = sdRights{
			owners: w.opts.Owners && enablePrivilege(restorePrivilege),
			sacl:   enablePrivilege(securityPrivilege),
		}
	})
	return w.sd.rights
}

// applySecurity gives the entry base in the directory dir (with an empty
// base, dir itself: a directory, or a file to reopen) the security
// descriptor sddl: the DACL, and the owner, group and SACL where the
// process may (sdRights), through a handle of its own with the rights to
// (openAt, never following a link; options are its create options). The
// descriptor is set as recorded, inherited
// entries included (SetKernelObjectSecurity, which neither recomputes
// them from the new parent nor walks the entry's children). A failure is
// a warning: the entry keeps the descriptor it has.
func (w *Writer) applySecurity(dir windows.Handle, base, rel, sddl string, options uint32) {
	if sddl == "" {
		return
	}
	if err := w.setSecurity(dir, base, sddl, options); err != nil {
		w.opts.Logf("fsmeta: %s: security descriptor not restored: %v", rel, err)
	}
}

func (w *Writer) setSecurity(dir windows.Handle, base, sddl string, options uint32) error {
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return fmt.Errorf("invalid SDDL: %w", err)
	}
	parts := restoredParts(sddlParts(sddl), w.sdRights())
	if parts == 0 {
		return nil
	}
	var access uint32
	if parts&sdDACL != 0 {
		access |= windows.WRITE_DAC
	}
	if parts&(sdOwner|sdGroup) != 0 {
		access |= windows.WRITE_OWNER
	}
	if parts&sdSACL != 0 {
		access |= windows.ACCESS_SYSTEM_SECURITY
	}
	h, err := openAt(dir, base, access, windows.FILE_OPEN, options)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer windows.CloseHandle(h) //nolint:errcheck // security only: nothing to flush
	if err := windows.SetKernelObjectSecurity(h, windows.SECURITY_INFORMATION(parts), sd); err != nil {
		return fmt.Errorf("SetKernelObjectSecurity: %w", err)
	}
	return nil
}

// mayRestoreOwners says whether the process holds SeRestorePrivilege,
// which setting any owner needs.
func mayRestoreOwners() bool {
	held, _ := privilege(restorePrivilege)
	return held
}

// enablePrivilege enables the privilege named name in the process's
// token if the token holds it, and says whether it is enabled.
func enablePrivilege(name string) bool {
	held, enabled := privilege(name)
	if !held || enabled {
		return enabled
	}
	var luid windows.LUID
	if windows.LookupPrivilegeValue(nil, windows.StringToUTF16Ptr(name), &luid) != nil {
		return false
	}
	var tok windows.Token
	if windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_ADJUST_PRIVILEGES|windows.TOKEN_QUERY, &tok) != nil {
		return false
	}
	defer tok.Close() //nolint:errcheck // a token handle: nothing to flush
	tp := windows.Tokenprivileges{PrivilegeCount: 1}
	tp.Privileges[0] = windows.LUIDAndAttributes{Luid: luid, Attributes: windows.SE_PRIVILEGE_ENABLED}
	if windows.AdjustTokenPrivileges(tok, false, &tp, 0, nil, nil) != nil {
		return false
	}
	_, enabled = privilege(name) // AdjustTokenPrivileges succeeds even when it assigned nothing
	return enabled
}

// privilege says whether the process's token holds the privilege named
// name, and whether it is enabled.
func privilege(name string) (held, enabled bool) {
	var luid windows.LUID
	if windows.LookupPrivilegeValue(nil, windows.StringToUTF16Ptr(name), &luid) != nil {
		return false, false
	}
	tok := windows.GetCurrentProcessToken()
	var n uint32
	_ = windows.GetTokenInformation(tok, windows.TokenPrivileges, nil, 0, &n) // the size it needs
	if n == 0 {
		return false, false
	}
	buf := make([]byte, n)
	if windows.GetTokenInformation(tok, windows.TokenPrivileges, &buf[0], n, &n) != nil {
		return false, false
	}
	for _, p := range (*windows.Tokenprivileges)(unsafe.Pointer(&buf[0])).AllPrivileges() {
		if p.Luid == luid {
			return true, p.Attributes&windows.SE_PRIVILEGE_ENABLED != 0
		}
	}
	return false, false
}
