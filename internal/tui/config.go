package tui

import (
	"context"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/frontend"
)

// Config is what the screen shows and runs. `cloudstic tui` fills it from
// profiles.yaml.
type Config struct {
	// Profiles are the profiles listed, in order.
	Profiles []Profile
	// Path is the profiles file, shown in the title.
	Path string
	// NoColor draws without colors (NO_COLOR).
	NoColor bool
	// Clock tells the time of the activity lines and lock expiries
	// (default clock.Real{}).
	Clock clock.Clock
	// LockPoll is how often the lock panel re-reads the locks of the
	// selected profile's repository (0: every 2 s; negative: never, only
	// after a run and on r, for tests that drive the model by hand).
	LockPoll time.Duration
}

// Job is one run the screen starts (a backup, a check, forget+prune, an
// init): it reports to out until it ends or ctx does. Cancelling ctx
// stops it and releases its lock.
type Job func(ctx context.Context, out frontend.RunOutput) error

// Profile is one profile of the list.
type Profile struct {
	// Name is the profile's name in profiles.yaml.
	Name string
	// Source, Store and Auth are shown as they are: they hold no secret
	// (Store is the store's name and URI).
	Source, Store, Auth string
	// Retention describes the retention policy, e.g. "keep-daily 7";
	// empty when the profile has none (f is then refused).
	Retention string
	// Status reads the profile's readiness and its snapshots.
	Status func(ctx context.Context) Status
	// Locks lists the locks of the profile's repository.
	Locks func(ctx context.Context) ([]Lock, error)
	// Backup, Check, Forget (forget+prune by the retention policy) and
	// Init (create the repository in the store) are the runs; nil ones
	// are not offered.
	Backup, Check, Forget, Init Job
}

// Status is what Profile.Status found.
type Status struct {
	// Reachable: the store could be opened and read.
	Reachable Readiness
	// Initialized: the store holds a repository.
	Initialized Readiness
	// Credentials: the password or keys resolve and open the repository.
	Credentials Readiness
	// Auth: the cloud login the source needs is configured (Known false
	// when the source needs none).
	Auth Readiness
	// Snapshots are the profile's snapshots, oldest first.
	Snapshots []Snapshot
}

// Readiness is one readiness check: known, passed, and why not.
type Readiness struct {
	Known, OK bool
	// Note says why it failed, or what it found, in one line.
	Note string
}

// Ready reports whether every known check passed and all of the store's
// are known: the profile can be backed up.
func (s Status) Ready() bool {
	for _, r := range []Readiness{s.Reachable, s.Initialized, s.Credentials, s.Auth} {
		if r.Known && !r.OK {
			return false
		}
	}
	return s.Reachable.Known && s.Initialized.Known && s.Credentials.Known
}

// Snapshot is one snapshot of a profile.
type Snapshot struct {
	ID   string // short id
	Time time.Time
	Host string
	// Files and Bytes are the files and bytes it holds.
	Files, Bytes int64
	Tags         []string
}

// Lock is one lock object of a repository.
type Lock struct {
	// Operation and Holder are what the lock object says: the command
	// and who runs it (host and process).
	Operation, Holder string
	// Shared: a shared lock (else exclusive).
	Shared bool
	// Expires is when it expires unless refreshed.
	Expires time.Time
	// State is "live", "stale", "dead" or "unreadable".
	State string
}
