// Package tui is `cloudstic tui`: the operator's terminal screen over the
// backup profiles of profiles.yaml, built on Bubble Tea.
//
// It shows each profile's readiness (store reachable, repository
// initialized, credentials resolvable, auth present), the selected
// profile's source, store, auth, latest backup and recent activity, the
// locks of its repository (refreshed), and a live progress bar while a
// run goes on. Its keys back up (offering init first when the store has
// no repository), check, forget+prune by the profile's retention policy,
// and list the profile's snapshots.
//
// The package sits beside internal/cli and internal/ui. It never opens a
// store or runs an engine itself: the command line describes every
// profile in a Config whose functions run the typed operations of
// internal/engine/operation (the same profile runs as backup -profile and
// the web dashboard's), and this package only draws and dispatches.
// That keeps the layering of .golangci.yml: no import of internal/repo or
// internal/store from here.
package tui
