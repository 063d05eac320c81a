package local

import "golang.org/x/sys/unix"

// errNoAttr is what lgetxattr says of an attribute that is not there.
const errNoAttr = unix.ENODATA
