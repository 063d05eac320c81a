package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

const sourceUsage = "source discover [-portable-only]"

func runSource(ctx context.Context, a *app, args []string) error {
	return a.runSubcommand(ctx, "source", sourceUsage, []subcommand{{"discover", sourceDiscover}}, args)
}

// sourceDiscover lists the local file systems a backup could start from.
func sourceDiscover(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	portableOnly := fs.Bool("portable-only", false, "only portable drives (removable, USB, MMC, loop images)")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	mounts, err := discoverMounts(ctx, *portableOnly)
	if err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(mounts)
		return nil
	}
	w := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MOUNT POINT\tDEVICE\tTYPE\tUUID\tLABEL\tPORTABLE")
	for _, m := range mounts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%v\n", m.MountPoint, m.Device, m.FSType, dash(m.UUID), dash(m.Label), m.Portable)
	}
	return w.Flush()
}

// discoverMounts is this machine's local file systems, or only its
// portable ones.
func discoverMounts(ctx context.Context, portableOnly bool) ([]operation.SourceMount, error) {
	all, err := operation.DiscoverSources(ctx)
	if err != nil {
		return nil, err
	}
	if !portableOnly {
		return all, nil
	}
	out := []operation.SourceMount{}
	for _, m := range all {
		if m.Portable {
			out = append(out, m)
		}
	}
	return out, nil
}

// dash stands for an empty table cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
