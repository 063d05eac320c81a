package volume

// removableMount: FreeBSD's statfs has no removable flag; no mount is
// reported portable.
func removableMount(uint64) bool { return false }

// hiddenMount: FreeBSD hides no local mount.
func hiddenMount(uint64, string) bool { return false }
