package fsmeta

// Windows security descriptors travel as SDDL text (tree.Node.SDDL): a
// backup on Windows records the owner, group and DACL of each entry, and
// its SACL when the process holds SeSecurityPrivilege; a restore on
// Windows sets them back (sd_windows.go). Other systems neither record
// nor apply one: a Windows snapshot restored there gets no xattr or
// anything else from it.

// The parts of a security descriptor, as Windows's SECURITY_INFORMATION
// bits name them (OWNER_SECURITY_INFORMATION...).
const (
	sdOwner uint32 = 0x1
	sdGroup uint32 = 0x2
	sdDACL  uint32 = 0x4
	sdSACL  uint32 = 0x8
)

// sddlParts says which parts the SDDL string s holds: a section starts
// with its tag letter and a colon (O:, G:, D:, S:) outside the ACEs'
// parentheses, and a colon appears nowhere else outside them (SIDs are
// letters, digits and dashes). Inside an ACE a conditional expression
// may hold quoted text; quotes are skipped over.
func sddlParts(s string) uint32 {
	var parts uint32
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted:
			quoted = c != '"'
		case c == '"':
			quoted = depth > 0
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ':' && depth == 0 && i > 0:
			switch s[i-1] {
			case 'O':
				parts |= sdOwner
			case 'G':
				parts |= sdGroup
			case 'D':
				parts |= sdDACL
			case 'S':
				parts |= sdSACL
			}
		}
	}
	return parts
}

// sdRights is what the process may set of a security descriptor beyond
// its DACL, which the owner of a file (the restore created it) may always
// set.
type sdRights struct {
	// owners: the owner and group may be any SID (SeRestorePrivilege,
	// and the restore asked for owners: WriterOptions.Owners).
	owners bool
	// sacl: the SACL may be set (SeSecurityPrivilege).
	sacl bool
}

// restoredParts are the parts of an SDDL holding parts that a restore
// with rights sets: the DACL always, the owner and group or the SACL
// only with the right to.
func restoredParts(parts uint32, rights sdRights) uint32 {
	want := sdDACL
	if rights.owners {
		want |= sdOwner | sdGroup
	}
	if rights.sacl {
		want |= sdSACL
	}
	return parts & want
}
