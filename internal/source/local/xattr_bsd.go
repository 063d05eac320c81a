//go:build darwin || freebsd

package local

import "golang.org/x/sys/unix"

// errNoAttr is what getxattr (macOS) or extattr_get (FreeBSD) says of an
// attribute that is not there.
const errNoAttr = unix.ENOATTR
