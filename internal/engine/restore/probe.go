package restore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// probeNames creates an empty file with a new lower-case name ending in
// "é" (precomposed, NFC) in dir, asks whether its upper-case and its
// decomposed (NFD) spellings name that same file, and removes it. It sees
// dir only: a directory below with other folding (ext4 casefold is set per
// directory) is not detected.
func probeNames(dir *os.Root) (f nameFolding, err error) {
	var random [8]byte
	if _, err := rand.Read(random[:]); err != nil {
		return f, err
	}
	const tail = "-\u00e9"
	stem := ".cloudstic-name-probe-" + hex.EncodeToString(random[:])
	name := stem + tail
	file, err := dir.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return f, err
	}
	defer func() { err = errors.Join(err, file.Close(), dir.Remove(name)) }()
	self, err := file.Stat()
	if err != nil {
		return f, err
	}
	// Only ASCII letters change case: vfat folds no others.
	if f.caseless, err = sameFile(dir, self, strings.ToUpper(stem)+tail); err != nil {
		return f, err
	}
	f.normless, err = sameFile(dir, self, norm.NFD.String(name))
	return f, err
}

// sameFile reports whether name in dir is the file self.
func sameFile(dir *os.Root, self os.FileInfo, name string) (bool, error) {
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(self, fi), nil
}
