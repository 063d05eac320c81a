package dump

// devNumbers splits a device number into the major and minor numbers tar
// records. Windows has no device files of its own, so a snapshot's
// devices come from another system: Linux's encoding (glibc's
// gnu_dev_major and gnu_dev_minor) is used, the most common.
func devNumbers(rdev uint64) (major, minor int64) {
	major = int64((rdev>>8)&0xfff | (rdev>>32)&0xfffff000) //nolint:gosec // at most 32 bits
	minor = int64(rdev&0xff | (rdev>>12)&0xffffff00)       //nolint:gosec // at most 32 bits
	return major, minor
}
