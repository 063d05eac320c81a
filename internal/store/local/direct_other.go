//go:build !linux

package local

import "os"

// writeData writes data to f, which is new, empty and open for writing.
// It does not sync. Only Linux writes large objects with O_DIRECT (see
// direct_linux.go); elsewhere every write goes through the page cache:
// macOS has no O_DIRECT (F_NOCACHE is a different contract) and Windows's
// unbuffered I/O needs sector-aligned handles opened for it.
func writeData(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}
