//go:build unix

package fsmeta

import "github.com/cloudstic/cloudstic/internal/repo/tree"

// capabilityXattr holds a file's capabilities (setcap): running the file
// grants them, as setuid root grants all.
const capabilityXattr = "security.capability"

// setuidBits are the mode bits that make running a regular file take its
// owner's or group's identity. On a directory setgid only makes new
// entries inherit its group, and sticky only restricts deletion: neither
// grants anything, and both are restored always.
const setuidBits = 0o6000

// modeOf is the mode to give an entry of n: its permission bits, without
// setuid and setgid on a regular file under NoSetuid.
func (w *Writer) modeOf(n *tree.Node) uint32 {
	mode := n.Mode & 0o7777
	if n.Type == tree.TypeFile && mode&setuidBits != 0 && w.opts.NoSetuid {
		w.priv.setuidWithheld.Add(1)
		mode &^= setuidBits
	}
	return mode
}

// modeSet counts a mode set on an entry of n.
func (w *Writer) modeSet(n *tree.Node, mode uint32) {
	if n.Type == tree.TypeFile && mode&setuidBits != 0 {
		w.priv.setuid.Add(1)
	}
}

// withheldXattr says whether the attribute named name is left out
// (NoCapabilities), counting it.
func (w *Writer) withheldXattr(name string) bool {
	if name == capabilityXattr && w.opts.NoCapabilities {
		w.priv.capsWithheld.Add(1)
		return true
	}
	return false
}

// xattrSet counts an attribute set.
func (w *Writer) xattrSet(name string) {
	if name == capabilityXattr {
		w.priv.caps.Add(1)
	}
}
