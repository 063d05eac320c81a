package fsmeta

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsafeName reports a name or relative path that could reach outside
// the output directory: empty, ".", "..", or holding "/" or NUL, or a
// relative path with such an element.
var ErrUnsafeName = errors.New("fsmeta: unsafe name")

// ErrExists reports that an entry to be created already exists; nothing was
// changed.
var ErrExists = errors.New("fsmeta: entry already exists")

// ErrTypeMismatch reports that the entry found on disk is not of the kind
// the node describes (a symlink where a file was expected, or the reverse),
// so its metadata is not applied.
var ErrTypeMismatch = errors.New("fsmeta: entry on disk has another type")

// ValidName reports whether name is safe as one element of a restored
// path. It returns an error wrapping ErrUnsafeName for "", ".", ".." and
// names containing "/" or NUL. A valid name Windows cannot hold ("a:b"
// names a stream there, "a\\b" a path, "CON" a device) is written under
// its LocalName by the Writer (see HostRel).
func ValidName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%w: %q", ErrUnsafeName, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q", ErrUnsafeName, name)
	}
	return nil
}

// ErrNameClash reports two names of one directory that are one name on
// this host: Windows compares names without case ("A" and "a"), and a
// mapped name may equal one the snapshot holds as it is ("a:b" is
// restored as "a%3Ab"); so do file systems that fold case or Unicode
// normalization elsewhere (restore finds those out).
var ErrNameClash = errors.New("fsmeta: names clash on this host")

// HostRel is the slash-separated relative path rel as it is written here:
// each element under its LocalName. The Writer's methods take snapshot
// paths and write at HostRel of them; on Unix it is rel itself.
func HostRel(rel string) string {
	if !hostMapsNames {
		return rel
	}
	elems := strings.Split(rel, "/")
	for i, e := range elems {
		if ValidName(e) == nil { // an unsafe one stays, for the caller to refuse
			elems[i], _ = LocalName(e)
		}
	}
	return strings.Join(elems, "/")
}

// JoinRel appends name to the slash-separated relative path parent ("" for
// the output directory itself) after checking both. The result is always a
// path that every Writer method accepts.
func JoinRel(parent, name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	if parent == "" {
		return name, nil
	}
	if _, _, err := splitRel(parent); err != nil {
		return "", err
	}
	return parent + "/" + name, nil
}

// splitRel checks every element of the slash-separated relative path rel
// and splits it into its parent directory ("." for the output directory)
// and its last element.
func splitRel(rel string) (dir, base string, err error) {
	if rel == "" {
		return "", "", fmt.Errorf("%w: empty path", ErrUnsafeName)
	}
	rest := rel
	for rest != "" {
		elem, tail, _ := strings.Cut(rest, "/")
		if err := ValidName(elem); err != nil {
			return "", "", fmt.Errorf("path %q: %w", rel, err)
		}
		if tail == "" && len(rest) > len(elem) {
			// rel ends in "/": an empty last element.
			return "", "", fmt.Errorf("%w: path %q ends in /", ErrUnsafeName, rel)
		}
		rest = tail
	}
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel, nil
	}
	return rel[:i], rel[i+1:], nil
}
