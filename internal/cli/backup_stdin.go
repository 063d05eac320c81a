package cli

import (
	"context"
	"flag"
	"os"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/source/cmdoutput"
)

// stdinFlags are backup's -stdin, -stdin-filename and -stdin-from-command.
type stdinFlags struct {
	stdin, fromCommand bool
	filename           string
}

func (s *stdinFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.stdin, "stdin", false, "back up standard input as one file (see -stdin-filename), e.g. pg_dump db | cloudstic backup -stdin")
	fs.StringVar(&s.filename, "stdin-filename", "stdin", "the file name of -stdin or -stdin-from-command in the snapshot; with the host it picks the parent snapshot")
	fs.BoolVar(&s.fromCommand, "stdin-from-command", false, "back up the output of the command given after --, as one file; a command that exits non-zero fails the backup and no snapshot is written")
}

// wanted says whether the backup is of a stream rather than a directory.
func (s *stdinFlags) wanted() bool { return s.stdin || s.fromCommand }

// directoryOnly are the backup flags that mean nothing for a stream.
var directoryOnly = []string{"source", "files-from", "files-from-verbatim", "files-from-raw", "source-sftp-key", "source-sftp-password", "source-sftp-known-hosts", "source-sftp-insecure", "exclude", "exclude-file", "exclude-if-present", "exclude-caches",
	"exclude-larger-than", "one-file-system", "skip-xattrs", "xattr-namespaces", "skip-mode", "skip-flags", "volume-uuid"}

// check refuses combinations that cannot work, before the repository is
// opened: pos are the arguments after the flags (the command of
// -stdin-from-command).
func (s *stdinFlags) check(a *app, fs *flag.FlagSet, pos []string) error {
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	switch {
	case s.stdin && s.fromCommand:
		return usageErr("give -stdin or -stdin-from-command, not both")
	case !s.wanted():
		if explicit["stdin-filename"] {
			return usageErr("-stdin-filename names the file of -stdin or -stdin-from-command; give one of them")
		}
		return nil
	}
	flagName := "-stdin"
	if s.fromCommand {
		flagName = "-stdin-from-command"
	}
	for _, name := range directoryOnly {
		if explicit[name] {
			return usageErr("-%s does not apply to %s, which backs up one stream", name, flagName)
		}
	}
	if err := backup.ValidStdinName(s.filename); err != nil {
		return usageErr("-stdin-filename: %v", err)
	}
	if s.fromCommand && len(pos) == 0 {
		return usageErr("-stdin-from-command: give the command after --, e.g. -stdin-from-command -- pg_dump mydb")
	}
	if s.stdin && len(pos) > 0 {
		return usageErr("unexpected argument %q (-stdin reads standard input)", pos[0])
	}
	if f, ok := a.io.Stdin.(*os.File); s.stdin && ok && term.IsTerminal(int(f.Fd())) {
		return usageErr("-stdin: standard input is a terminal; pipe the data in, e.g. pg_dump db | cloudstic backup -stdin")
	}
	return nil
}

// attach sets opts.Stream when a stream is backed up, and returns a
// function that ends it: for -stdin-from-command it starts the command,
// which the function kills if it still runs.
func (s *stdinFlags) attach(ctx context.Context, a *app, pos []string, opts *backup.Options) (stop func(), err error) {
	switch {
	case s.stdin:
		opts.Stream = &backup.Stream{Reader: a.io.Stdin, Filename: s.filename}
	case s.fromCommand:
		r, err := cmdoutput.Start(ctx, pos, a.childEnv(), a.io.Stderr)
		if err != nil {
			return nil, err
		}
		opts.Stream = &backup.Stream{Reader: r, Filename: s.filename}
		return func() {
			// The backup reported how the command ended, if it read to the end.
			_ = r.Close()
		}, nil
	}
	return func() {}, nil
}
