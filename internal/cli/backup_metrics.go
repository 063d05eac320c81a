package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/metrics"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// checkMetricsFile refuses -metrics-file where it has no single run to
// describe.
func (f *backupFlags) checkMetricsFile(allProfiles bool) error {
	switch {
	case f.metricsFile == "":
		return nil
	case f.dryRun:
		return usageErr("-metrics-file: a dry run stores nothing to report; drop -dry-run or -metrics-file")
	case allProfiles:
		return usageErr("-metrics-file applies to one backup: give -profile NAME, not -all-profiles")
	}
	return nil
}

// backupMetrics writes -metrics-file (when given) for a backup that
// began at start and ended with res and backupErr, the backup's own error
// (nil: a snapshot was saved, or nothing differed).
func (a *app) backupMetrics(path, profile string, start time.Time, res *operation.BackupResult, backupErr error) error {
	if path == "" {
		return nil
	}
	end := clock.Real{}.Now()
	run := metrics.Backup{Labels: metrics.Labels{Repository: a.g.repo.URI, Profile: profile}, End: end,
		Duration: end.Sub(start), Snapshots: -1, OK: res != nil && backupErr == nil}
	if res != nil {
		run.LockWait, run.Snapshots = res.LockWait, res.Snapshots
		s := res.Snapshot.Summary
		run.BytesAdded, run.FilesAdded = s.BytesAdded, s.FilesNew+s.FilesChanged
	}
	return metrics.WriteTextfile(path, run)
}

// profileBackupErr is the error of a profile run's backup step alone:
// RunProfile's error when the backup failed, nil when only the retention
// policy after it did.
func profileBackupErr(err error) error {
	if errors.Is(err, operation.ErrRetention) || errors.Is(err, operation.ErrPruneAfterForget) {
		return nil
	}
	return err
}

// metricsOutcome is a reported run's error (runErr) with that of writing
// its metrics file: a file that cannot be written fails a run that
// succeeded (the backup is saved and was reported); a failed run keeps
// its own error, and the file's is a warning.
func (a *app) metricsOutcome(runErr, metricsErr error) error {
	switch {
	case metricsErr == nil:
		return runErr
	case runErr == nil || errors.Is(runErr, errPartial):
		return fmt.Errorf("the backup was saved, but %w", metricsErr)
	default:
		a.warnf("%v", metricsErr)
		return runErr
	}
}
