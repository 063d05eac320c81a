package main

import (
	"context"
	"net/http"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/ui"
)

// dashboard serves `cloudstic ui` with internal/ui. It lives here, not in
// internal/cli, because the dashboard sits beside the command line and the
// command line never imports it: this only copies the CLI's description
// of the repositories into the dashboard's configuration.
func dashboard(ctx context.Context, c cli.DashboardConfig) (http.Handler, error) {
	cfg := ui.Config{Token: c.Token, User: c.User, Password: c.Password, ReadOnly: c.ReadOnly,
		RestoreRoot: c.RestoreRoot, Secure: c.Secure, LoopbackOnly: c.LoopbackOnly}
	for _, r := range c.Repos {
		repo := ui.Repository{Name: r.Name, Store: r.Store, Repo: r.Repo}
		for _, a := range r.Actions {
			repo.Actions = append(repo.Actions, ui.Action{Name: a.Name, Label: a.Label, Writes: a.Writes, Run: a.Run})
		}
		cfg.Repos = append(cfg.Repos, repo)
	}
	return ui.New(ctx, cfg)
}
