package cli

import (
	"context"
	"net"
	"net/http"
	"time"
)

// uiServerLimits bound what a client of the dashboard's HTTP server can
// hold: a connection that never finishes its headers, one left idle
// between requests, and the size of the headers. (Bodies are bounded by
// the dashboard itself, which takes small forms only; there is no read or
// write timeout for a whole request, as downloads and live streams last
// long.)
type uiServerLimits struct {
	readHeader     time.Duration
	idle           time.Duration
	maxHeaderBytes int
}

// defaultUIServerLimits are the limits of `cloudstic ui`: a browser sends
// its headers at once and keeps an idle connection for a minute or more
// (reopening one costs a TLS handshake at most); cookies and credentials
// fit in 64 KiB with room to spare.
func defaultUIServerLimits() uiServerLimits {
	return uiServerLimits{readHeader: 10 * time.Second, idle: 60 * time.Second, maxHeaderBytes: 64 << 10}
}

// newUIServer is the HTTP server of the dashboard h; requests' contexts
// end with ctx.
func newUIServer(ctx context.Context, h http.Handler, l uiServerLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.readHeader, IdleTimeout: l.idle, MaxHeaderBytes: l.maxHeaderBytes,
		BaseContext: func(net.Listener) context.Context { return ctx }}
}
