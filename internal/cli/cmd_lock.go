package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
)

func lockJSON(l lock.Info) map[string]any {
	m := map[string]any{"key": l.Key, "operation": l.Operation, "holder": l.Holder, "acquired_at": l.AcquiredAt,
		"expires_at": l.ExpiresAt, "is_shared": l.IsShared, "stale": l.Stale}
	if l.Err != nil {
		m["error"] = l.Err.Error()
	}
	return m
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
	locks, err := lock.List(ctx, st, a.lockOptions())
	if err != nil {
		return err
	}
	if a.g.json {
		out := make([]map[string]any, 0, len(locks))
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
	now := time.Now()
	for _, l := range locks {
		kind, state := "exclusive", "live"
		if l.IsShared {
			kind = "shared"
		}
		if l.Stale {
			state = "stale"
		}
		if l.Err != nil {
			state = "unreadable: " + l.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kind, state, l.Operation, l.Holder,
			now.Sub(l.AcquiredAt).Round(time.Second), l.ExpiresAt.Local().Format(time.RFC3339), l.Key)
	}
	return tw.Flush()
}

func runBreakLock(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	staleOnly := fs.Bool("stale-only", false, "remove only expired locks")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := a.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeStore()
	removed, err := lock.Break(ctx, st, *staleOnly, a.lockOptions())
	if a.g.json {
		out := make([]map[string]any, 0, len(removed))
		for _, l := range removed {
			out = append(out, lockJSON(l))
		}
		if err == nil {
			a.writeJSON(map[string]any{"removed": out})
		}
		return err
	}
	for _, l := range removed {
		fmt.Fprintf(a.io.Stdout, "removed %s: operation: %s, holder: %s, acquired: %s, expires: %s, shared: %v\n", l.Key,
			l.Operation, l.Holder, l.AcquiredAt.Format(time.RFC3339Nano), l.ExpiresAt.Format(time.RFC3339Nano), l.IsShared)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(a.io.Stdout, "no locks to remove")
	}
	return err
}
