package main

import (
	"context"
	"net/http"

	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/ui"
)

// dashboard serves `cloudstic ui` with internal/ui. It lives here, not in
// internal/cli, because the dashboard sits beside the command line and the
// command line never imports it: both speak frontend.Config.
func dashboard(ctx context.Context, cfg frontend.Config) (http.Handler, error) {
	return ui.New(ctx, cfg)
}
