package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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

// zipOutput is the zip file a restore writes. It has no name (O_TMPFILE)
// or a temporary one in Output's directory until commit names it Output,
// and commit never replaces anything there: a restore that fails or is
// interrupted leaves nothing at Output, and nothing of the user's is lost
// to a restore.
type zipOutput struct {
	w    *fsmeta.Writer // Output's directory
	f    *os.File
	name string // Output's name in w
	tmp  string // the temporary name, "" for an unnamed file
}

// createZipOutput creates the file a zip restore writes; ErrOutputExists
// when something is at Output already.
func createZipOutput(opts Options) (*zipOutput, error) {
	if _, err := lstatOutput(opts); err == nil {
		return nil, fmt.Errorf("%s: %w (remove it or choose another -output)", opts.Output, ErrOutputExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir, name := filepath.Split(opts.Output)
	if dir == "" {
		dir = "."
	}
	// The directory must exist, as for any file we are asked to create:
	// a mistyped -output makes no directories.
	var err error
	if opts.Within != nil {
		_, err = opts.Within.Stat(dir)
	} else {
		_, err = os.Stat(dir)
	}
	if err != nil {
		return nil, err
	}
	z := &zipOutput{name: name}
	if opts.Within != nil {
		z.w, err = fsmeta.NewWriterIn(opts.Within, dir, fsmeta.WriterOptions{})
	} else {
		z.w, err = fsmeta.NewWriter(dir, fsmeta.WriterOptions{})
	}
	if err != nil {
		return nil, err
	}
	z.f, err = z.w.CreateUnnamed(name)
	if errors.Is(err, fsmeta.ErrNoUnnamed) {
		z.tmp = tempName(name)
		z.f, err = z.w.CreateFile(z.tmp, nil)
	}
	if err != nil {
		return nil, errors.Join(err, z.w.Close())
	}
	return z, nil
}

// commit makes the complete file durable and gives it its name, unless
// something appeared at Output meanwhile (ErrOutputExists; the file is
// then discarded).
func (z *zipOutput) commit(output string) error {
	err := z.f.Sync()
	if err == nil && z.tmp == "" {
		err = z.w.LinkUnnamed(z.f, z.name)
	}
	if cerr := z.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && z.tmp != "" {
		err = z.w.Rename(z.tmp, z.name, true)
	}
	if err != nil {
		if z.tmp != "" {
			err = errors.Join(err, z.w.Remove(z.tmp))
		}
		if errors.Is(err, fsmeta.ErrExists) {
			err = fmt.Errorf("%s: %w: it appeared during the restore and was left alone", output, ErrOutputExists)
		}
	}
	return errors.Join(err, z.w.Close())
}

// discard drops the file: an unnamed one is freed when it is closed, a
// temporary name removed.
func (z *zipOutput) discard() error {
	err := z.f.Close()
	if z.tmp != "" {
		err = errors.Join(err, z.w.Remove(z.tmp))
	}
	return errors.Join(err, z.w.Close())
}

func newOutputWriter(opts Options, wopts fsmeta.WriterOptions) (*fsmeta.Writer, error) {
	if opts.Within != nil {
		return fsmeta.NewWriterIn(opts.Within, opts.Output, wopts)
	}
	return fsmeta.NewWriter(opts.Output, wopts)
}
