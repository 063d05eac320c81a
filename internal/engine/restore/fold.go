package restore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/engine/fsmeta"
	"golang.org/x/text/unicode/norm"
)

// nameFolding says which names the file system of a restore target takes
// for one name, beyond those fsmeta.FoldName knows on every target of this
// host (Windows's).
type nameFolding struct {
	// caseless: names that differ only in case are one name (a default
	// macOS volume, SMB, exFAT and vfat mounts, an ext4 or f2fs casefold
	// directory).
	caseless bool
	// normless: a name's Unicode normalization forms are one name (APFS,
	// HFS+, an ext4 casefold directory).
	normless bool
}

// foldProbe finds out how the file system of a restore target compares
// names. hostProbe is the real one (probe_*.go); tests give a fixed answer.
type foldProbe interface {
	folding(dir *os.Root) (nameFolding, error)
}

// fixedFolding is a foldProbe that answers itself without looking.
type fixedFolding nameFolding

func (f fixedFolding) folding(*os.Root) (nameFolding, error) { return nameFolding(f), nil }

// nameClash is how a directory walk finds the names of one directory that
// are one name on the restore target.
type nameClash struct {
	fold   func(name string) (key string, ok bool) // ok false: nothing to compare
	report func(rel string, err error)
}

// met reports (and says true) when name, of the entry at rel, is on the
// target one that seen, the names met before in its directory of n
// entries, holds; else it adds name to seen.
func (c *nameClash) met(seen *map[string]string, name, rel string, n int) bool {
	key, ok := c.fold(name)
	if !ok {
		return false
	}
	if *seen == nil {
		*seen = make(map[string]string, n)
	}
	if first, dup := (*seen)[key]; dup {
		c.report(rel, clashError(name, first))
		return true
	}
	(*seen)[key] = name
	return false
}

// probe is how the restore finds out how its target compares names.
func (d *dirRestore) probe() foldProbe {
	if d.opts.probe != nil {
		return d.opts.probe
	}
	return hostProbe{}
}

// keepKey is the key of rel in keep, the paths -delete leaves: rel as it
// is written here (fsmeta.HostRel), each element folded as the target
// folds names, so that where "REPORT.txt" and "report.txt" are one file
// the entry on disk is the snapshot's, not an extra to delete.
func (d *dirRestore) keepKey(rel string) string {
	rel = fsmeta.HostRel(rel)
	if d.names == nil {
		return rel
	}
	elems := strings.Split(rel, "/")
	for i, e := range elems {
		if key, ok := d.names.fold(e); ok {
			elems[i] = key
		}
	}
	return strings.Join(elems, "/")
}

// clashError says why name is not restored: first, met before in its
// directory, is restored under the same name.
func clashError(name, first string) error {
	if local, mapped := fsmeta.LocalName(name); mapped {
		return fmt.Errorf("%w: written as %q, it would be %q, which is restored there", fsmeta.ErrNameClash, local, first)
	}
	if norm.NFC.String(name) == norm.NFC.String(first) {
		// Spelt alike: show the code points that differ.
		return fmt.Errorf("%w: %+q is the same name as %+q here, which is restored there", fsmeta.ErrNameClash, name, first)
	}
	return fmt.Errorf("%w: %q is the same name as %q here, which is restored there", fsmeta.ErrNameClash, name, first)
}

// clashRule is the nameClash of a target folding as f: fsmeta.FoldName
// where the host folds every name (Windows), else f's folding.
func clashRule(f nameFolding, report func(rel string, err error)) *nameClash {
	return &nameClash{report: report, fold: func(name string) (string, bool) {
		if key, ok := fsmeta.FoldName(name); ok {
			return key, true
		}
		if !f.caseless && !f.normless {
			return "", false
		}
		return f.key(name), true
	}}
}

// key is the name under which a file system folding as f finds name:
// decomposed (NFD, as HFS+ and ext4 casefold store and compare names)
// and in upper case. Bytes that are not UTF-8 stay as they are, so that
// two such names are not taken for one.
func (f nameFolding) key(name string) string {
	if f.normless && utf8.ValidString(name) {
		name = norm.NFD.String(name)
	}
	if !f.caseless {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(name[i])
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
		i += size
	}
	return b.String()
}

// probeOutput asks p how the file system of the restore's output
// directory, which exists, compares names.
func probeOutput(p foldProbe, opts Options) (nameFolding, error) {
	var root *os.Root
	var err error
	if opts.Within != nil {
		root, err = opts.Within.OpenRoot(opts.Output)
	} else {
		root, err = os.OpenRoot(opts.Output)
	}
	if err != nil {
		return nameFolding{}, err
	}
	defer root.Close() //nolint:errcheck // a directory handle: nothing was written through it
	f, err := p.folding(root)
	if err != nil {
		return nameFolding{}, fmt.Errorf("%s: finding out how its file system compares names: %w", opts.Output, err)
	}
	return f, nil
}

// probeDryRun is probeOutput for a dry run, whose output may not exist
// yet: it asks about the nearest directory of the output's path that
// exists, where the restore would create it (a new directory folds as its
// parent does on ext4; elsewhere folding is per volume).
func probeDryRun(p foldProbe, output string) (nameFolding, error) {
	dir, err := filepath.Abs(output)
	if err != nil {
		return nameFolding{}, err
	}
	for {
		fi, err := os.Stat(dir)
		if err == nil && fi.IsDir() {
			break
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nameFolding{}, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nameFolding{}, fmt.Errorf("%s: no directory of it exists", output)
		}
		dir = parent
	}
	return probeOutput(p, Options{Output: dir})
}
