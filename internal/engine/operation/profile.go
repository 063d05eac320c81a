package operation

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/forget"
	"github.com/cloudstic/cloudstic/internal/engine/prune"
)

// ProfileJob is what RunProfile does with a profile.
type ProfileJob int

const (
	// ProfileBackup backs the profile's source up; with a retention
	// policy it then forgets by it among the snapshots of the group the
	// new snapshot records, and prunes when asked to.
	ProfileBackup ProfileJob = iota + 1
	// ProfileForget applies the retention policy on its own, to the
	// group the profile's backups record (backup.Recorded), and prunes
	// when asked to.
	ProfileForget
	// ProfileCheck checks the repository the profile backs up into.
	ProfileCheck
)

// ErrRetention marks a profile run whose retention policy could not be
// applied (the backup, if one ran, stands).
var ErrRetention = errors.New("the retention policy could not be applied")

// ProfileOptions are one run of a profile. Every front end (backup
// -profile, backup -all-profiles, the dashboard, what schedule installs)
// fills them from the profile and its own settings, and RunProfile does
// the rest the same way for all of them.
type ProfileOptions struct {
	Job ProfileJob
	// Backup are the options of the profile's backup, its source resolved
	// as backup's -source is (ProfileBackup, ProfileForget).
	Backup backup.Options
	// Policy is the profile's retention policy; empty: ProfileBackup only
	// backs up. Nothing is forgotten after a dry run.
	Policy forget.Policy
	// Prune, when set, prunes with these options after forget.
	Prune *prune.Options
	// Check are the options of ProfileCheck.
	Check check.Options
	// Progress reports the progress of each step (nil: none).
	Progress *Reporter
}

// ProfileResult is what a profile run did; a step that did not run is
// nil.
type ProfileResult struct {
	Backup *BackupResult
	// Group is the group of snapshots the retention policy applied to:
	// the new snapshot's source, host, path and tags.
	Group  *forget.GroupKey
	Forget *forget.Result
	Prune  *prune.Result
	Check  *check.Result
}

// retentionGroupBy groups snapshots by everything a backup records of its
// origin: a profile's policy applies to its own snapshots only, not to
// those of the same source with other tags (another profile's, or one
// tagged by hand to be kept).
var retentionGroupBy = forget.GroupBy{Source: true, Host: true, Path: true, Tags: true}

// RunProfile runs one job of a profile on r: a backup followed by its
// retention policy (forget, then prune when opts.Prune is set), the
// policy alone, or a check. Each step takes the lock its operation takes
// (Backup, Forget, Check) and runs on a fresh view of r.
//
// The policy applies to the group the backup recorded in its snapshot,
// not to the profile's source as written: "local:./data" and
// "local:~/data/" are recorded as the absolute path, and only the
// recorded group finds the profile's earlier snapshots. A backup that
// could not read some files (its result lists them) is still followed by
// the policy: its snapshot was saved.
//
// Errors: the backup's as Backup returns them; a failed forget wraps
// ErrRetention, a failed prune step ErrPruneAfterForget.
func RunProfile(ctx context.Context, r *Repo, opts ProfileOptions) (*ProfileResult, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRetention, err)
	}
	res := &ProfileResult{}
	switch opts.Job {
	case ProfileCheck:
		var err error
		res.Check, err = Check(ctx, r, opts.Check, opts.Progress.Check)
		return res, err
	case ProfileForget:
		origin, err := backup.Recorded(ctx, opts.Backup)
		if err != nil {
			return res, fmt.Errorf("%w: %w", ErrRetention, err)
		}
		key := retentionGroupBy.Key(origin)
		return res, res.retention(ctx, r, key, opts)
	case ProfileBackup:
	default:
		return nil, fmt.Errorf("RunProfile: unknown job %d", opts.Job)
	}
	b, err := Backup(ctx, r.Fresh(), opts.Backup, opts.Progress.Backup)
	res.Backup = b
	if err != nil || opts.Policy.Empty() || opts.Backup.DryRun {
		return res, err
	}
	return res, res.retention(ctx, r, retentionGroupBy.Key(b.Snapshot), opts)
}

// retention forgets by opts.Policy among the snapshots of group key, then
// prunes when opts.Prune is set.
func (res *ProfileResult) retention(ctx context.Context, r *Repo, key forget.GroupKey, opts ProfileOptions) error {
	if opts.Policy.Empty() {
		return fmt.Errorf("%w: the profile has no keep_* rule", ErrRetention)
	}
	res.Group = &key
	fopts := forget.Options{Policy: opts.Policy, GroupBy: retentionGroupBy, Group: &key}
	f, p, err := Forget(ctx, r.Fresh(), fopts, opts.Prune, opts.Progress.Prune)
	res.Forget, res.Prune = f, p
	if err != nil && !errors.Is(err, ErrPruneAfterForget) {
		err = fmt.Errorf("%w: %w", ErrRetention, err)
	}
	return err
}
