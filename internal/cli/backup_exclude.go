package cli

import (
	"errors"
	"flag"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
)

// excludeFlags are backup's exclude flags.
type excludeFlags struct {
	patterns, files, ifPresent multiFlag
	caches, oneFS              bool
	largerThan                 string
}

func (e *excludeFlags) register(fs *flag.FlagSet) {
	fs.Var(&e.patterns, "exclude", "skip what this gitignore-style pattern matches: *.tmp, cache/ (directories only), /build (at the source root), !keep.log (repeatable; last match wins)")
	fs.Var(&e.files, "exclude-file", "read exclude patterns from this file, in gitignore syntax (# comments, blank lines; repeatable)")
	fs.Var(&e.ifPresent, "exclude-if-present", "skip every directory holding an entry of this name, e.g. .nobackup (repeatable)")
	fs.BoolVar(&e.caches, "exclude-caches", false, "skip every directory holding a CACHEDIR.TAG file with its standard signature")
	fs.StringVar(&e.largerThan, "exclude-larger-than", "", "skip files larger than this size: bytes, or with a k, M, G or T suffix (powers of 1024)")
	fs.BoolVar(&e.oneFS, "one-file-system", false, "do not cross mount points: directories on another device than the source are stored empty")
}

// xattrFlags are backup's -skip-xattrs, -xattr-namespaces, -skip-mode and
// -skip-flags.
type xattrFlags struct {
	skip                bool
	namespaces          string
	skipMode, skipFlags bool
}

func (x *xattrFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&x.skip, "skip-xattrs", false, "record no extended attributes")
	fs.StringVar(&x.namespaces, "xattr-namespaces", "", "record only extended attributes with these name prefixes, comma-separated, e.g. user.,trusted.")
	fs.BoolVar(&x.skipMode, "skip-mode", false, "record no permission bits, owners or file flags: entries get mode 0644 (directories 0755) and no owner")
	fs.BoolVar(&x.skipFlags, "skip-flags", false, "record no file flags (chattr: immutable, append-only, nodump, noatime...)")
}

// options checks the flags and sets them in opts.
func (x *xattrFlags) options(opts *backup.Options) error {
	opts.SkipMode, opts.SkipFlags = x.skipMode, x.skipFlags
	if x.namespaces == "" {
		opts.SkipXattrs = x.skip
		return nil
	}
	if x.skip {
		return usageErr("-skip-xattrs and -xattr-namespaces exclude each other")
	}
	for _, ns := range strings.Split(x.namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			return usageErr("-xattr-namespaces %q: an empty prefix; want e.g. user.,trusted.", x.namespaces)
		}
		opts.XattrNamespaces = append(opts.XattrNamespaces, ns)
	}
	return nil
}

// options checks the flags and sets the exclude rules of opts.
func (e *excludeFlags) options(opts *backup.Options) error {
	patterns, err := excludePatterns(e.patterns, e.files)
	if err != nil {
		return err
	}
	var maxSize int64
	if e.largerThan != "" {
		if maxSize, err = parseSize(e.largerThan); err != nil {
			return usageErr("-exclude-larger-than %q: %v", e.largerThan, err)
		}
	}
	for _, name := range e.ifPresent {
		if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
			return usageErr("-exclude-if-present %q: want a file name, without /", name)
		}
	}
	opts.Excludes, opts.ExcludeIfPresent, opts.ExcludeCaches = patterns, e.ifPresent, e.caches
	opts.ExcludeLargerThan, opts.OneFileSystem = maxSize, e.oneFS
	return nil
}

// excludePatterns checks the -exclude patterns and reads the
// -exclude-file files: the gitignore lines of a backup, flags first, in
// order, so that a file's "!" lines can re-include what a flag excluded.
func excludePatterns(flags, files []string) ([]string, error) {
	for _, p := range flags {
		if err := exclude.ParsePattern(p); err != nil {
			return nil, usageErr("-exclude: %v", err)
		}
	}
	lines := append([]string(nil), flags...)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageErr("-exclude-file: %v", err)
		}
		more, err := exclude.ReadLines(f)
		f.Close() //nolint:errcheck // read-only
		if err != nil {
			return nil, usageErr("-exclude-file %s: %v", name, err)
		}
		if _, err := exclude.NewMatcher(more); err != nil {
			return nil, usageErr("-exclude-file %s: %v", name, err)
		}
		lines = append(lines, more...)
	}
	return lines, nil
}

// parseSize reads a size: bytes, or a number with a k, M, G or T suffix
// (powers of 1024, any case, optionally followed by B or iB).
func parseSize(s string) (int64, error) {
	num := strings.ToLower(s)
	for _, unit := range []string{"ib", "b"} {
		if cut, ok := strings.CutSuffix(num, unit); ok && cut != "" {
			num = cut
			break
		}
	}
	shift := 0
	if i := strings.IndexAny(num, "kmgt"); i >= 0 && i == len(num)-1 {
		shift, num = 10*(1+strings.IndexByte("kmgt", num[i])), num[:i]
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 {
		return 0, errors.New("want a positive number of bytes, or a size like 500k, 10M, 2G")
	}
	if v > math.MaxInt64>>shift {
		return 0, errors.New("too large")
	}
	return v << shift, nil
}
