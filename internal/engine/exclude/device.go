package exclude

import (
	"io/fs"

	"github.com/cloudstic/cloudstic/internal/source"
)

// Device is the device number of an entry, from its lstat metadata (that
// of a source without devices, and of Windows, is 0: -one-file-system
// then keeps everything).
func Device(fi fs.FileInfo) uint64 {
	if d, ok := localDevice(fi); ok {
		return d
	}
	if st := source.StatOf(fi); st != nil {
		return st.Device
	}
	return 0
}
