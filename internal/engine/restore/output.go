package restore

import (
	"io/fs"
	"os"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
)

// The file operations on Options.Output itself, through Options.Within
// when it is set (so that they cannot leave it), else by path.

func lstatOutput(opts Options) (fs.FileInfo, error) {
	if opts.Within != nil {
		return opts.Within.Lstat(opts.Output)
	}
	return os.Lstat(opts.Output)
}

// createOutputFile creates the zip file to write; one already there is
// fs.ErrExist.
func createOutputFile(opts Options) (*os.File, error) {
	const flag, perm = os.O_WRONLY | os.O_CREATE | os.O_EXCL, 0o600
	if opts.Within != nil {
		return opts.Within.OpenFile(opts.Output, flag, perm)
	}
	return os.OpenFile(opts.Output, flag, perm)
}

func removeOutput(opts Options) error {
	if opts.Within != nil {
		return opts.Within.Remove(opts.Output)
	}
	return os.Remove(opts.Output)
}

func newOutputWriter(opts Options, wopts fsmeta.WriterOptions) (*fsmeta.Writer, error) {
	if opts.Within != nil {
		return fsmeta.NewWriterIn(opts.Within, opts.Output, wopts)
	}
	return fsmeta.NewWriter(opts.Output, wopts)
}
