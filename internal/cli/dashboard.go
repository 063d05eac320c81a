package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/cloudstic/cloudstic/internal/frontend"
)

// The web dashboard (internal/ui) sits beside the CLI and is never imported
// by it: `cloudstic ui` opens the repositories, describes them and the runs
// it offers in a frontend.Config, and hands it to IO.Dashboard, which
// cmd/cloudstic wires to internal/ui.

// Dashboard builds the web dashboard's HTTP handler for cfg. Runs started
// from the page stop when ctx ends.
type Dashboard func(ctx context.Context, cfg frontend.Config) (http.Handler, error)

// errDashboardStopped ends `cloudstic ui` stopped by Ctrl-C (wrapping
// context.Canceled): the dashboard's own sentence, not a backup's.
var errDashboardStopped = errors.New("stopped by Ctrl-C; the dashboard is no longer served (a run it had started was interrupted)")

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
	if tls || insecure || frontend.LoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("%w: -listen %s is reachable from other machines; give -tls-cert and -tls-key, or -listen-insecure", errInsecureListen, addr)
}

// newToken returns a random access token (128 bits, hex).
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
