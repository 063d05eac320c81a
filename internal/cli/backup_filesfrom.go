package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// filesFromFlags are backup's lists of files to back up, as restic reads
// them.
type filesFromFlags struct {
	globs, verbatim, raw multiFlag
}

func (f *filesFromFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.globs, "files-from", "back up the files and directories FILE lists, one a line: # comments, blank lines skipped, globs expanded (repeatable; - is stdin)")
	fs.Var(&f.verbatim, "files-from-verbatim", "back up the paths FILE lists, one a line, taken as they are (repeatable; - is stdin)")
	fs.Var(&f.raw, "files-from-raw", "back up the paths FILE lists, NUL-separated, taken as they are (repeatable; - is stdin)")
}

// given reports whether any list was given.
func (f *filesFromFlags) given() bool {
	return len(f.globs)+len(f.verbatim)+len(f.raw) > 0
}

// paths reads every list: the paths to back up, in order. Globs that match
// nothing are reported through warnf and skipped, as restic does.
func (f *filesFromFlags) paths(stdin io.Reader, warnf func(string, ...any)) ([]string, error) {
	var out []string
	for _, l := range []struct {
		flag  string
		files []string
		parse func(data []byte, warnf func(string, ...any)) ([]string, error)
	}{{"-files-from", f.globs, globLines}, {"-files-from-verbatim", f.verbatim, verbatimLines}, {"-files-from-raw", f.raw, rawEntries}} {
		for _, name := range l.files {
			data, err := readList(name, stdin)
			if err != nil {
				return nil, usageErr("%s %v", l.flag, err)
			}
			paths, err := l.parse(data, warnf)
			if err != nil {
				return nil, usageErr("%s %s: %v", l.flag, name, err)
			}
			out = append(out, paths...)
		}
	}
	return out, nil
}

// readList reads a list file; "-" is stdin.
func readList(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// lines splits data into lines, without their "\n" or "\r\n".
func lines(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		out = append(out, strings.TrimSuffix(line, "\r"))
	}
	return out
}

// globLines reads -files-from: each line trimmed of surrounding space; blank
// lines and lines starting with # skipped; the others are glob patterns
// (filepath.Glob), a path without glob characters matching itself if it
// exists.
func globLines(data []byte, warnf func(string, ...any)) ([]string, error) {
	var out []string
	for _, line := range lines(data) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		matches, err := filepath.Glob(line)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", line, err)
		}
		if len(matches) == 0 {
			warnf("-files-from: %q matches no file; skipped", line)
		}
		out = append(out, matches...)
	}
	return out, nil
}

// verbatimLines reads -files-from-verbatim: every non-empty line is a path
// as it is (spaces, #, glob characters included).
func verbatimLines(data []byte, _ func(string, ...any)) ([]string, error) {
	var out []string
	for _, line := range lines(data) {
		if line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

// rawEntries reads -files-from-raw: NUL-separated paths as they are (a
// newline is part of a name); empty entries are skipped.
func rawEntries(data []byte, _ func(string, ...any)) ([]string, error) {
	var out []string
	for _, p := range bytes.Split(data, []byte{0}) {
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out, nil
}
