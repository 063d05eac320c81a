// Package cli implements the cloudstic command line: flag parsing (single-
// dash Go flags that may follow positional arguments), opening the store
// and the repository, taking the repository lock for the commands that
// need it, running the engine and printing human or JSON output.
//
// Exit codes: 0 success, 1 error, 2 usage error, 3 backup completed but
// some files could not be read.
package cli
