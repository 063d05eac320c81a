package mount

import "syscall"

// lazyUnmount detaches a busy mount now and cleans it up once it is left.
const lazyUnmount = syscall.MNT_DETACH

// errNoAttr is what getxattr says of an attribute that is not there.
const errNoAttr = syscall.ENODATA
