package mount

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// lazyUnmount: FreeBSD has no lazy detach; a forced unmount is the last
// resort.
const lazyUnmount = unix.MNT_FORCE

// errNoAttr is what extattr_get says of an attribute that is not there.
const errNoAttr = syscall.ENOATTR
