package restore

import "os"

// SetFolding makes a restore take its target's file system for one that
// compares names without case (caseless) or without Unicode normalization
// (normless), instead of looking.
func SetFolding(opts *Options, caseless, normless bool) {
	opts.probe = fixedFolding{caseless: caseless, normless: normless}
}

// ProbeFolding looks at how the file system of the directory dir compares
// names, as a restore there does on Unix (on Windows the restore does
// not look: fsmeta.FoldName folds every name).
func ProbeFolding(dir string) (caseless, normless bool, err error) {
	f, err := probeOutput(probeFunc(probeNames), Options{Output: dir})
	return f.caseless, f.normless, err
}

// probeFunc is a foldProbe that calls itself.
type probeFunc func(dir *os.Root) (nameFolding, error)

func (p probeFunc) folding(dir *os.Root) (nameFolding, error) { return p(dir) }
