// Package frontend holds what the command line (internal/cli) and the web
// dashboard (internal/ui) share and neither may import from the other:
// the dashboard's configuration, which `cloudstic ui` builds and the
// dashboard serves (cmd/cloudstic hands one to the other), and the small
// helpers both render with (human sizes, the loopback check).
//
// It sits below both front ends and above the operation layer, whose
// opened repositories and progress events the configuration carries.
package frontend
