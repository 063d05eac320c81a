package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runFind(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	var snapRefs, sizes multiFlag
	fs.Var(&snapRefs, "snapshot", "search only this snapshot (id prefix or latest); repeatable (default: all snapshots)")
	prefix := fs.String("path-prefix", "", "search only below this directory of each snapshot, e.g. /home/me/Documents")
	newer := fs.String("newer", "", "only entries modified after this time: 2006-01-02, '2006-01-02 15:04', RFC 3339, or an age such as 36h or 7d")
	older := fs.String("older", "", "only entries modified before this time (same forms as -newer)")
	fs.Var(&sizes, "size", "only files of this size: +N (larger than N), -N (smaller than N) or N (exactly), N in bytes or with K, M, G, T (powers of 1024); repeatable")
	ignoreCase := fs.Bool("i", false, "match patterns without regard to case")
	maxResults := fs.Int("max-results", defaultFindMaxResults, "report at most N files (the first N found; -json says truncated); 0: no limit")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	opts := operation.FindOptions{Patterns: pos, PathPrefix: *prefix, IgnoreCase: *ignoreCase}
	if *maxResults < 0 {
		return usageErr("-max-results %d: give a number of files, or 0 for no limit", *maxResults)
	}
	if err := operation.CheckFindPatterns(pos); err != nil {
		return usageErr("%v", err)
	}
	now := clock.Real{}.Now()
	if opts.Newer, err = parseTimeFlag("-newer", *newer, now); err != nil {
		return err
	}
	if opts.Older, err = parseTimeFlag("-older", *older, now); err != nil {
		return err
	}
	for _, s := range sizes {
		if err := applySizeFlag(&opts, s); err != nil {
			return err
		}
	}
	r, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	return a.find(ctx, r, newFindQuery(opts, *newer, *older, snapRefs, *maxResults), opts)
}

// defaultFindMaxResults is Cloudstic's default -max-results.
const defaultFindMaxResults = 1000

func (a *app) find(ctx context.Context, r *operation.Repo, q findQuery, opts operation.FindOptions) error {
	start := clock.Real{}.Now()
	res := findResult{Query: q, Matches: []*findMatch{}, GroupedBy: "file"}
	byKey := map[findKey]*findMatch{}
	var seq func(snapshot.WithID) int
	found, err := operation.Find(ctx, r, "find", func(all []snapshot.WithID) ([]snapshot.WithID, error) {
		seq = seqNumbers(all)
		return operation.Refs(q.Snapshots...)(all)
	}, opts, func(m operation.FindMatch) error {
		k := findKey{m.Snapshot.Source, strings.TrimPrefix(m.Path, "/"), m.Node.Type}
		f := byKey[k]
		if f == nil {
			// As Cloudstic's, the limit counts files: one already
			// reported keeps gathering its versions.
			if q.MaxResults > 0 && len(res.Matches) >= q.MaxResults {
				res.Truncated = true
				return nil
			}
			f = newFindMatch(m.Snapshot, k.path, k.typ)
			byKey[k] = f
			res.Matches = append(res.Matches, f)
		}
		f.add(m.Snapshot, seq(m.Snapshot), m.Node)
		return nil
	})
	if err != nil {
		return err
	}
	res.SnapshotsSearched = len(found.Searched)
	res.EntriesScanned = found.Entries
	sort.SliceStable(res.Matches, func(i, j int) bool {
		if res.Matches[i].SourceURI != res.Matches[j].SourceURI {
			return res.Matches[i].SourceURI < res.Matches[j].SourceURI
		}
		return res.Matches[i].Path < res.Matches[j].Path
	})
	for _, f := range res.Matches {
		f.finish()
	}
	res.Elapsed = clock.Real{}.Now().Sub(start).Round(time.Millisecond).String()
	if a.g.json {
		a.writeJSON(res)
		return nil
	}
	for _, f := range res.Matches {
		printFindFile(a, f)
	}
	if res.Truncated {
		a.warnf("stopped after %d files; narrow the query or raise -max-results to see the rest", len(res.Matches))
	}
	return nil
}

// findKey is what find groups its matches by.
type findKey struct {
	source, path string
	typ          tree.Type
}

// printFindFile prints one file of find: its path as ls prints it and its
// source, then one indented line per snapshot holding it.
func printFindFile(a *app, f *findMatch) {
	name := termtext.Safe(f.Path)
	if f.nodeType == tree.TypeDir {
		name += "/"
	}
	w := a.io.Stdout
	fmt.Fprintf(w, "%s  (%s)\n", name, termtext.Safe(f.SourceURI))
	for _, h := range f.hits {
		size := "-"
		if f.nodeType == tree.TypeFile {
			size = frontend.HumanBytes(int64(h.node.Size))
		}
		fmt.Fprintf(w, "  %s  %s  %s  %s  %10s\n", h.snap.ID.Short(), h.snap.Time.Local().Format("2006-01-02 15:04"),
			modeString(h.node), time.Unix(0, h.node.MTime).Local().Format("2006-01-02 15:04:05"), size)
	}
}

// parseTimeFlag reads an absolute time (date, date and time in local
// time, or RFC 3339) or an age (Go duration, or whole days as Nd / weeks
// as Nw) counted back from now. Empty gives the zero time.
func parseTimeFlag(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	if last := v[len(v)-1]; last == 'd' || last == 'w' {
		if days, err := strconv.Atoi(v[:len(v)-1]); err == nil && days >= 0 {
			if last == 'w' {
				days *= 7
			}
			return now.AddDate(0, 0, -days), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageErr("%s %q: give a date (2006-01-02), a date and time ('2006-01-02 15:04'), RFC 3339, or an age such as 36h or 7d", name, v)
}

// applySizeFlag adds one -size bound to opts.
func applySizeFlag(opts *operation.FindOptions, v string) error {
	sign := ""
	num := v
	if strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-") {
		sign, num = v[:1], v[1:]
	}
	n, err := parseByteSize(num)
	if err != nil {
		return usageErr("-size %q: %v (e.g. +10M, -1K, 4096)", v, err)
	}
	switch sign {
	case "+":
		opts.MinSize = max(opts.MinSize, n+1)
	case "-":
		if n == 0 {
			return usageErr("-size %q: no file is smaller than 0 bytes", v)
		}
		if !opts.HasMaxSize || n-1 < opts.MaxSize {
			opts.MaxSize, opts.HasMaxSize = n-1, true
		}
	default:
		opts.MinSize = max(opts.MinSize, n)
		if !opts.HasMaxSize || n < opts.MaxSize {
			opts.MaxSize, opts.HasMaxSize = n, true
		}
	}
	return nil
}

// errBadSize is the reason parseByteSize gives for what it cannot read.
var errBadSize = errors.New("want a number of bytes, optionally followed by K, M, G or T")

// parseByteSize reads "4096", "10K", "1.5M", "2GiB" (units are powers of 1024).
func parseByteSize(s string) (int64, error) {
	s = strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if s != "" {
		if i := strings.IndexByte("KMGT", s[len(s)-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f < 0 || f*float64(mult) > 1<<62 { // f != f: NaN
		return 0, errBadSize
	}
	return int64(f * float64(mult)), nil
}
