//go:build unix

package local

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cloudstic/cloudstic/internal/source"
)

// xattrBufSize is the first buffer tried for a name list or a value; most
// fit, and a larger one is sized on ERANGE.
const xattrBufSize = 256

// readXattrs returns every extended attribute of path (not following a
// symlink), sorted by name. A file system without xattr support has none.
// With no attributes it makes exactly one system call and no allocation.
func readXattrs(path string) ([]source.Xattr, error) {
	list, err := xattrCall(path, "")
	if isNotSupported(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("llistxattr: %w", err)
	}
	if len(list) == 0 {
		return nil, nil
	}
	names := splitNames(list)
	out := make([]source.Xattr, 0, len(names))
	for _, name := range names {
		val, err := xattrCall(path, name)
		if errors.Is(err, errNoAttr) {
			continue // removed since the list was read
		}
		if err != nil {
			return nil, fmt.Errorf("lgetxattr %s: %w", name, err)
		}
		if val == nil {
			val = []byte{}
		}
		out = append(out, source.Xattr{Name: name, Value: val})
	}
	slices.SortFunc(out, func(a, b source.Xattr) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// xattrCall reads the attribute name of path, or with name "" the list of
// attribute names, into a buffer on the stack and returns a copy of what
// it got (nil if nothing). While the call reports ERANGE (the data did not
// fit, or grew meanwhile) it asks for the size and retries with a buffer
// that big.
func xattrCall(path, name string) ([]byte, error) {
	f := func(b []byte) (int, error) {
		if name == "" {
			return unix.Llistxattr(path, b)
		}
		return unix.Lgetxattr(path, name, b)
	}
	var stack [xattrBufSize]byte
	n, err := f(stack[:])
	if err == nil {
		if n == 0 {
			return nil, nil
		}
		return append([]byte(nil), stack[:n]...), nil
	}
	for tries := 0; errors.Is(err, unix.ERANGE) && tries < 8; tries++ {
		size, serr := f(nil)
		if serr != nil {
			return nil, serr
		}
		buf := make([]byte, size+xattrBufSize)
		n, err = f(buf)
		if err == nil {
			return buf[:n], nil
		}
	}
	return nil, err
}

// isNotSupported reports the errors that mean a file system has no xattrs.
func isNotSupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}

// splitNames splits a NUL-terminated list of names.
func splitNames(list []byte) []string {
	var names []string
	start := 0
	for i, b := range list {
		if b == 0 {
			if i > start {
				names = append(names, string(list[start:i]))
			}
			start = i + 1
		}
	}
	if start < len(list) {
		names = append(names, string(list[start:]))
	}
	return names
}
