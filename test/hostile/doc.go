// Package hostile runs the cloudstic binary against damaged repositories
// and hostile input (wrong credentials, future format versions, damaged
// packs) and checks for one-line errors, no panics and non-zero exits.
package hostile
