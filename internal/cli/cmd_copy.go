package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/engine/snapcopy"
	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

func runCopy(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	from := a.registerFrom(fs)
	var tags, hosts multiFlag
	fs.Var(&tags, "tag", "copy only the snapshots with this tag (repeatable: all must match)")
	fs.Var(&hosts, "host", "copy only the snapshots of this host (repeatable: any may match)")
	compression := fs.String("compression", "auto", "how to compress file contents in the destination: auto, fast, small or off (as backup)")
	dryRun := fs.Bool("dry-run", false, "show what would be copied and skipped; read no data, write nothing, take no lock")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := from.apply(a); err != nil {
		return err
	}
	comp, err := parseCompression(*compression, isLocal(a.g.repo.URI))
	if err != nil {
		return err
	}
	opts := snapcopy.Options{IDs: pos, Tags: tags, Hosts: hosts, DryRun: *dryRun, Compression: comp, Uploaders: uploaders(a)}

	src, err := from.app.openRepo(ctx)
	if err != nil {
		return err
	}
	defer from.app.closeStore()
	dst, err := a.openRepo(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	res, err := operation.Copy(ctx, src, dst, opts)
	if res != nil {
		a.printCopy(res, *dryRun, from.app.skipped(), err)
	}
	return err
}

// printCopy prints what copy did; srcDamage is what it skipped in the
// source repository.
func (a *app) printCopy(res *snapcopy.Result, dryRun bool, srcDamage skippedDamage, runErr error) {
	if a.g.json {
		if runErr == nil {
			out := copyJSON(res, dryRun)
			out.skippedDamage = a.skipped()
			out.SourceDamagedIndexFiles, out.SourceDamagedSnapshots = srcDamage.DamagedIndexFiles, srcDamage.DamagedSnapshots
			a.writeJSON(out)
		}
		return
	}
	w := a.io.Stdout
	copied := 0
	for _, c := range res.Copied {
		s := c.Source
		when := s.Time.Local().Format("2006-01-02 15:04:05")
		switch {
		case dryRun:
			fmt.Fprintf(w, "would copy %s  %s  %s  %s\n", s.ID.Short(), when, termtext.Safe(s.Hostname), termtext.Safe(s.Path))
		case !c.NewID.IsZero():
			fmt.Fprintf(w, "copied %s -> %s  %s  %s  %s\n", s.ID.Short(), c.NewID.Short(), when, termtext.Safe(s.Hostname), termtext.Safe(s.Path))
			copied++
		}
	}
	if a.g.verbose {
		for _, s := range res.Skipped {
			fmt.Fprintf(w, "skipped %s  (already in the destination)\n", s.ID.Short())
		}
	}
	how := "blob for blob"
	if res.Rechunked {
		how = "re-chunked: the repositories' chunker parameters differ"
	}
	if dryRun {
		fmt.Fprintf(w, "Dry run: %d snapshots would be copied (%s), %d are already in the destination\n",
			len(res.Copied), how, len(res.Skipped))
		return
	}
	fmt.Fprintf(w, "Copied %d snapshots (%s), %d were already in the destination; %d blobs read, %d new blobs (%s) stored\n",
		copied, how, len(res.Skipped), res.BlobsRead, res.BlobsAdded, frontend.HumanBytes(res.BytesAdded))
}

// copyJSON builds copy -json's document.
func copyJSON(res *snapcopy.Result, dryRun bool) copyResult {
	out := copyResult{Copied: []copyJSONSnapshot{}, Skipped: []string{}, DryRun: dryRun, Rechunked: res.Rechunked,
		BlobsRead: res.BlobsRead, BlobsAdded: res.BlobsAdded, BytesAdded: res.BytesAdded}
	for _, c := range res.Copied {
		s := c.Source
		j := copyJSONSnapshot{SourceID: s.ID.String(), Original: s.OriginalID(s.ID).String(), Time: s.Time,
			Host: s.Hostname, Path: s.Path, Tags: nonNil(s.Tags)}
		if !c.NewID.IsZero() {
			j.NewID = c.NewID.String()
		}
		out.Copied = append(out.Copied, j)
	}
	for _, s := range res.Skipped {
		out.Skipped = append(out.Skipped, s.ID.String())
	}
	return out
}

// copyUsage is copy's usage line.
var copyUsage = strings.Join([]string{"copy -from-store URI [-from-password-file F | -from-password-command C | -from-password-ref R |",
	"-from-encryption-key HEX64 | -from-recovery-key W | -from-kms-key-arn ARN] [-from-profile NAME] [-from-s3-*|-from-b2-*|-from-store-sftp-*]",
	"[SNAPSHOT...] [-tag T]... [-host H]... [-compression auto|fast|small|off] [-dry-run]"}, " ")
