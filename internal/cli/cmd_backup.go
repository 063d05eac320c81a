package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/exclude"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
)

func runBackup(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	source := fs.String("source", "", "what to back up: local:PATH")
	var tags, excludes multiFlag
	fs.Var(&tags, "tag", "tag the snapshot (repeatable)")
	fs.Var(&excludes, "exclude", "skip what this gitignore-style pattern matches: *.tmp, cache/ (directories only), /build (at the source root), !keep.log (repeatable; last match wins)")
	var excludeFiles, ifPresent multiFlag
	fs.Var(&excludeFiles, "exclude-file", "read exclude patterns from this file, in gitignore syntax (# comments, blank lines; repeatable)")
	fs.Var(&ifPresent, "exclude-if-present", "skip every directory holding an entry of this name, e.g. .nobackup (repeatable)")
	excludeCaches := fs.Bool("exclude-caches", false, "skip every directory holding a CACHEDIR.TAG file with its standard signature")
	largerThan := fs.String("exclude-larger-than", "", "skip files larger than this size: bytes, or with a k, M, G or T suffix (powers of 1024)")
	oneFS := fs.Bool("one-file-system", false, "do not cross mount points: directories on another device than the source are stored empty")
	dryRun := fs.Bool("dry-run", false, "show what would be stored, store nothing")
	compression := fs.String("compression", "auto",
		"how file contents are compressed: fast (s2), small (zstd: about a quarter smaller on text, 2.5 times the CPU), off, or auto (fast on a local disk, small on remote stores)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	comp, err := parseCompression(*compression, isLocal(a.g.store))
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q (give the source with -source local:PATH)", pos[0])
	}
	path, ok := strings.CutPrefix(*source, "local:")
	if *source == "" {
		return usageErr("-source is required, e.g. -source local:~/Documents")
	}
	if !ok {
		return usageErr("-source %q: only local:PATH sources are supported", *source)
	}
	if strings.HasPrefix(path, "~/") {
		if home := a.io.Getenv("HOME"); home != "" {
			path = filepath.Join(home, path[2:])
		}
	}
	patterns, err := excludePatterns(excludes, excludeFiles)
	if err != nil {
		return err
	}
	var maxSize int64
	if *largerThan != "" {
		if maxSize, err = parseSize(*largerThan); err != nil {
			return usageErr("-exclude-larger-than %q: %v", *largerThan, err)
		}
	}
	for _, name := range ifPresent {
		if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
			return usageErr("-exclude-if-present %q: want a file name, without /", name)
		}
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	opts := backup.Options{Path: path, Tags: tags, Excludes: patterns, DryRun: *dryRun, Warnf: a.warnf,
		Uploaders: uploaders(a), Compression: comp, ExcludeIfPresent: ifPresent, ExcludeCaches: *excludeCaches,
		ExcludeLargerThan: maxSize, OneFileSystem: *oneFS}
	if a.g.verbose {
		opts.Verbosef = a.infof
	}
	run := func(ctx context.Context, _ *lock.Lock) error { return a.backup(ctx, r, opts) }
	if *dryRun {
		return run(ctx, nil)
	}
	return a.withLock(ctx, r.Store(), false, "backup", run)
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

// uploaders is how many packs are uploaded at once. A local disk keeps up
// with one (its fsync of a 16 MiB pack took a median 4 ms here, filling
// it ~50 ms), and each more uploader can hold one more pack in memory; remote
// stores need several requests in flight.
func uploaders(a *app) int {
	if isLocal(a.g.store) {
		return 1
	}
	return max(2, a.g.storeConns/2)
}

// parseCompression reads -compression. auto picks what a backup is usually
// short of: CPU on a local disk, where s2 made a 1 GB backup about a fifth
// faster; bandwidth and paid storage on remote stores, where zstd's
// smaller output is worth its CPU.
func parseCompression(value string, local bool) (pack.Compression, error) {
	switch value {
	case "auto":
		if local {
			return pack.S2, nil
		}
		return pack.Zstd, nil
	case "fast":
		return pack.S2, nil
	case "small":
		return pack.Zstd, nil
	case "off":
		return pack.Off, nil
	}
	return 0, usageErr("-compression %q: want auto, fast, small or off", value)
}

func (a *app) backup(ctx context.Context, r *repo.Repository, opts backup.Options) error {
	snaps, err := indexedSnapshots(ctx, r)
	if err != nil {
		return err
	}
	stopProgress := a.backupProgress(&opts)
	res, err := backup.Run(ctx, r, snaps, opts)
	stopProgress()
	if errors.Is(err, backup.ErrSource) {
		return fmt.Errorf("cannot back up %s: %w", opts.Path, err)
	}
	if err != nil {
		return err
	}
	for _, e := range res.Errors {
		fmt.Fprintf(a.io.Stderr, "error: %v\n", e)
	}
	s := res.Snapshot.Summary
	if a.g.json {
		out := map[string]any{"summary": s, "dry_run": opts.DryRun, "errors": len(res.Errors)}
		if !opts.DryRun {
			out["snapshot_id"] = res.ID.String()
		}
		if res.Parent != nil {
			out["parent"] = res.Parent.ID.String()
		}
		a.writeJSON(out)
	} else {
		w := a.io.Stdout
		if a.g.verbose && res.Parent != nil {
			fmt.Fprintf(w, "Parent:      %s (%s)\n", res.Parent.ID.String()[:8], res.Parent.Time.Local().Format("2006-01-02 15:04:05"))
		}
		fmt.Fprintf(w, "Files:       %d new, %d changed, %d unmodified, %d removed\n", s.FilesNew, s.FilesChanged, s.FilesUnmodified, s.FilesRemoved)
		fmt.Fprintf(w, "Dirs:        %d new, %d changed, %d unmodified\n", s.DirsNew, s.DirsChanged, s.DirsUnmodified)
		fmt.Fprintf(w, "Added:       %s in %d blobs (%s read of %s)\n", humanBytes(s.BytesAdded), s.BlobsAdded, humanBytes(s.BytesRead), humanBytes(s.BytesTotal))
		fmt.Fprintf(w, "Duration:    %.1fs\n", s.DurationSeconds)
		if opts.DryRun {
			fmt.Fprintln(w, "Dry run: nothing was stored")
		} else {
			fmt.Fprintf(w, "Snapshot %s saved\n", res.ID.String()[:8])
		}
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(a.io.Stderr, "cloudstic backup: %d files or directories could not be read (listed above); the rest was saved\n", len(res.Errors))
		return errPartial
	}
	return nil
}
