package frontend

import (
	"context"
	"io"
	"time"

	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// Config is what the web dashboard serves and how. `cloudstic ui` fills
// it from its flags and the repositories it opened.
type Config struct {
	Repos []Repository
	// Token is the access token printed at start; User and Password, when
	// set, replace it with HTTP basic authentication.
	Token          string
	User, Password string
	// ReadOnly hides and refuses every writing action (runs that write,
	// restores).
	ReadOnly bool
	// RestoreRoot, when set, confines restore targets to this directory.
	RestoreRoot string
	// Secure marks cookies Secure (served over TLS).
	Secure bool
	// LoopbackOnly accepts only requests whose Host header names the
	// loopback interface (against DNS rebinding), for a 127.0.0.1 listener.
	LoopbackOnly bool
	// Clock tells the time (default clock.Real{}).
	Clock clock.Clock
	// LockPoll is how often the live lock panel re-reads the locks
	// (default 2 s).
	LockPoll time.Duration
}

// Repository is one opened repository the dashboard shows.
type Repository struct {
	// Name is what the page calls it (a profile or store name, or the
	// store URI); it is shown escaped and never used as a path.
	Name string
	// Store is the store's URI, shown on the page: it must hold no secret.
	Store string
	// Profile is the profile backing up into it, when there is exactly
	// one (a label of its /metrics series); empty otherwise.
	Profile string
	// Repo is the opened repository, with the lock settings of the
	// dashboard's own reads and restores. The dashboard reads through a
	// fresh view of it per request (operation.Repo.Fresh).
	Repo *operation.Repo
	// Actions are the runs offered on the page (a profile's backup,
	// forget+prune, check).
	Actions []Action
}

// Action is one run the page offers for a repository.
type Action struct {
	// Name identifies it in URLs: letters, digits and '-' only.
	Name string
	// Label is the button's text.
	Label string
	// Writes marks a run that changes the repository: -read-only hides it.
	Writes bool
	// Run does the work, reporting to out, until it ends or ctx does.
	Run func(ctx context.Context, out RunOutput) error
}

// RunOutput is where a run started from the dashboard reports.
type RunOutput struct {
	// Progress gets the run's progress events, as the command line's
	// status line and -json-progress lines show them.
	Progress func(operation.Progress)
	// Log gets the run's messages (warnings, files that could not be
	// read), a line each.
	Log io.Writer
	// Summary gets the run's summary, as the command line prints it.
	Summary io.Writer
}
