package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// lockDoc is one lock object in the -json output of locks and break-lock.
// An unreadable object has readable false, an error and an excerpt of its
// bytes, and no payload fields.
type lockDoc struct {
	Key        string     `json:"key"`
	Kind       string     `json:"kind"`
	Readable   bool       `json:"readable"`
	Operation  string     `json:"operation,omitempty"`
	Holder     string     `json:"holder,omitempty"`
	AcquiredAt *time.Time `json:"acquired_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	IsShared   bool       `json:"is_shared"`
	Stale      bool       `json:"stale"`
	Dead       bool       `json:"dead"`
	Size       int64      `json:"size"`
	ModTime    *time.Time `json:"mod_time,omitempty"`
	Error      string     `json:"error,omitempty"`
	Excerpt    string     `json:"excerpt,omitempty"`
}

func lockJSON(l operation.LockInfo) lockDoc {
	d := lockDoc{Key: l.Key, Kind: l.Kind(), Readable: l.Err == nil, IsShared: l.IsShared, Stale: l.Stale, Dead: l.Dead, Size: l.Size}
	if !l.ModTime.IsZero() {
		d.ModTime = &l.ModTime
	}
	if l.Err != nil {
		d.Error, d.Excerpt = l.Err.Error(), l.Excerpt
		return d
	}
	d.Operation, d.Holder, d.AcquiredAt, d.ExpiresAt = l.Operation, l.Holder, &l.AcquiredAt, &l.ExpiresAt
	return d
}

// describeLock is one line about a lock for break-lock's text output. Keys
// and payloads are whatever the store holds: termtext renders them.
func describeLock(l operation.LockInfo) string {
	if l.Err != nil {
		line := termtext.Sprintf("%s: unreadable%s: %v", l.Key, unreadableFacts(l, ""), l.Err)
		if l.Excerpt != "" {
			line += "; first bytes: " + termtext.Safe(l.Excerpt)
		}
		return line
	}
	return termtext.Sprintf("%s: operation: %s, holder: %s, acquired: %s, expires: %s, shared: %v", l.Key,
		l.Operation, l.Holder, l.AcquiredAt.Format(time.RFC3339Nano), l.ExpiresAt.Format(time.RFC3339Nano), l.IsShared)
}

func runLocks(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	// Locks are plain JSON: no password needed, and the repository need
	// not open (a broken repository can still be unlocked).
	st, err := a.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeStore()
	locks, err := operation.Locks(ctx, st, a.lockOptions())
	if err != nil {
		return err
	}
	if a.g.json {
		out := make([]lockDoc, 0, len(locks))
		for _, l := range locks {
			out = append(out, lockJSON(l))
		}
		a.writeJSON(out)
		return nil
	}
	if len(locks) == 0 {
		fmt.Fprintln(a.io.Stdout, "no locks")
		return nil
	}
	tw := tabwriter.NewWriter(a.io.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tSTATE\tOPERATION\tHOLDER\tAGE\tEXPIRES\tKEY")
	var unreadable []operation.LockInfo
	for _, l := range locks {
		if l.Err != nil {
			fmt.Fprintf(tw, "%s\tunreadable\t-\t-\t-\t-\t%s\n", l.Kind(), termtext.Safe(l.Key))
			unreadable = append(unreadable, l)
			continue
		}
		state := "live"
		switch {
		case l.Stale:
			state = "stale"
		case l.Dead:
			state = "dead" // its holder ran here and its process is gone
		}
		// The age is by the store's clock, as the lock judges staleness:
		// this host's clock may be off.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Kind(), state, termtext.Safe(l.Operation), termtext.Safe(l.Holder),
			l.Age.Round(time.Second), l.ExpiresAt.Local().Format(time.RFC3339), termtext.Safe(l.Key))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range unreadable {
		fmt.Fprintln(a.io.Stdout, termtext.Sprintf("unreadable %s%s: %v", l.Key, unreadableFacts(l, " by the store's clock"), l.Err))
		if l.Excerpt != "" { // none when it was not read (too large, not a regular file)
			fmt.Fprintf(a.io.Stdout, "  first bytes: %s\n", termtext.Safe(l.Excerpt))
		}
	}
	return nil
}

// unreadableFacts is what the store told of an unreadable lock object,
// " (113 bytes, written ...)", or "" when it told nothing (an object that
// is not a regular file); clock qualifies the time.
func unreadableFacts(l operation.LockInfo, clock string) string {
	if l.ModTime.IsZero() {
		return ""
	}
	return fmt.Sprintf(" (%d bytes, written %s%s)", l.Size, l.ModTime.Format(time.RFC3339), clock)
}

func runBreakLock(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	staleOnly := fs.Bool("stale-only", false, "remove only expired locks and those whose holder ran on this host and is gone")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := a.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeStore()
	removed, err := operation.BreakLocks(ctx, st, *staleOnly, a.lockOptions())
	if a.g.json {
		out := make([]lockDoc, 0, len(removed))
		for _, l := range removed {
			out = append(out, lockJSON(l))
		}
		if err == nil {
			a.writeJSON(breakLockDoc{Removed: out})
		}
		return err
	}
	for _, l := range removed {
		fmt.Fprintf(a.io.Stdout, "removed %s\n", describeLock(l))
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(a.io.Stdout, "no locks to remove")
	}
	return err
}

// breakLockDoc is break-lock's -json document.
type breakLockDoc struct {
	Removed []lockDoc `json:"removed"`
}

// lockHint is what to do about a lock that refused a command, appended to
// its one-line message ("" for other errors): wait longer, look at the
// locks, and remove those of holders whose process is gone.
func lockHint(err error) string {
	switch {
	case !errors.Is(err, operation.ErrLocked):
		return ""
	case errors.Is(err, operation.ErrHolderDead):
		return "; run cloudstic break-lock -stale-only to remove the locks of dead holders, retry with -lock-wait 10m, or see cloudstic locks"
	case errors.Is(err, operation.ErrBadLock):
		return "; see cloudstic locks"
	default:
		return "; retry with -lock-wait 10m, or see cloudstic locks"
	}
}
