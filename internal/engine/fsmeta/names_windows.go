package fsmeta

import "strings"

// hostMapsNames is true: Windows cannot hold every name a snapshot may
// (see WindowsName).
const hostMapsNames = true

// LocalName is the name a snapshot's name is restored under here: on
// Windows, WindowsName's mapping of a name Windows cannot hold (changed is
// then true), else the name itself.
func LocalName(name string) (local string, changed bool) { return WindowsName(name) }

// FoldName is the key under which Windows takes two names for one: their
// local names compared without case (NTFS's upper-case table, which
// strings.ToUpper follows for all but a few rare letters).
func FoldName(name string) (key string, ok bool) {
	local, _ := LocalName(name)
	return strings.ToUpper(local), true
}
