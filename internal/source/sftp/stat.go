package sftp

import (
	"io/fs"

	"github.com/pkg/sftp"

	"github.com/cloudstic/cloudstic/internal/source"
)

// fileInfo is a pkg/sftp FileInfo whose Sys is a *source.Stat.
type fileInfo struct {
	fs.FileInfo
	st *source.Stat
}

// Sys returns the entry's *source.Stat.
func (fi fileInfo) Sys() any { return fi.st }

// newFileInfo converts what the server told of an entry. Its attributes
// carry the Unix mode (type and permission bits, setuid, setgid and sticky
// included), the owner ids and the mtime in seconds.
func newFileInfo(fi fs.FileInfo) fs.FileInfo {
	st := &source.Stat{MTime: fi.ModTime().UnixNano()}
	if fst, ok := fi.Sys().(*sftp.FileStat); ok {
		st.Mode = fst.Mode & 0o7777
		st.UID, st.GID = fst.UID, fst.GID
		st.MTime = int64(fst.Mtime) * 1e9
	} else {
		st.Mode = uint32(fi.Mode().Perm())
	}
	return fileInfo{FileInfo: fi, st: st}
}
