// Package walktest builds real repositories with real backups for the
// tests of the read paths (find, dump, stats, mount), and counts which
// store objects those read.
package walktest
