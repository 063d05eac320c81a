package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// The web dashboard (internal/ui) sits beside the CLI and is never imported
// by it: `cloudstic ui` opens the repositories, describes them and the runs
// it offers in the types below, and hands them to IO.Dashboard, which
// cmd/cloudstic wires to internal/ui.

// Dashboard builds the web dashboard's HTTP handler for cfg. Runs started
// from the page stop when ctx ends.
type Dashboard func(ctx context.Context, cfg DashboardConfig) (http.Handler, error)

// DashboardConfig is what the dashboard serves and how.
type DashboardConfig struct {
	Repos []DashboardRepo
	// Token is the access token printed at start; User and Password, when
	// set, replace it with HTTP basic authentication.
	Token          string
	User, Password string
	// ReadOnly hides and refuses every writing action.
	ReadOnly bool
	// RestoreRoot, when set, confines restore targets to this directory.
	RestoreRoot string
	// Secure marks cookies Secure (served over TLS).
	Secure bool
	// LoopbackOnly accepts only requests whose Host header names the
	// loopback interface (against DNS rebinding).
	LoopbackOnly bool
}

// DashboardRepo is one opened repository the dashboard shows.
type DashboardRepo struct {
	// Name is what the page calls it: a profile or store name, or the URI.
	Name string
	// Store is the store's URI, shown on the page: it holds no secret.
	Store string
	// Repo is the opened repository.
	Repo *operation.Repo
	// Actions are the runs offered for it.
	Actions []DashboardAction
}

// DashboardAction is one run the page offers: a profile's backup,
// forget+prune, or a check.
type DashboardAction struct {
	// Name identifies it in URLs: letters, digits and '-' only.
	Name string
	// Label is the button's text.
	Label string
	// Writes marks a run that changes the repository.
	Writes bool
	// Run does the work, writing -json-progress lines to progress and the
	// human summary to summary.
	Run func(ctx context.Context, progress, summary io.Writer) error
}

// errNoDashboard: the binary was built without the web dashboard (IO.Dashboard is nil).
var errNoDashboard = errors.New("this cloudstic binary has no web dashboard")

// errInsecureListen: a non-loopback -listen address without TLS or -listen-insecure.
var errInsecureListen = errors.New("refusing to serve on a non-loopback address without TLS")

// checkListen refuses a listen address other than the loopback interface
// unless TLS serves it or the user insisted (-listen-insecure).
func checkListen(addr string, tls, insecure bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-listen %q: want HOST:PORT, e.g. 127.0.0.1:8080: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("-listen %q: bad port %q", addr, port)
	}
	if tls || insecure || loopbackName(host) {
		return nil
	}
	return fmt.Errorf("%w: -listen %s is reachable from other machines; give -tls-cert and -tls-key, or -listen-insecure", errInsecureListen, addr)
}

// loopbackName reports whether a listen host names only the loopback
// interface ("" means every interface).
func loopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newToken returns a random access token (128 bits, hex).
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
