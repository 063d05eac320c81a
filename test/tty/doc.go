// Package tty holds the terminal tests of the cloudstic command: the test
// builds the binary and drives it inside a detached tmux session (a real
// pseudo-terminal), checking that passwords are read without echo, that
// the progress line is drawn during a backup and cleared afterwards, and
// that `cloudstic tui` draws, runs and quits as docs/tui.md says.
//
// Run: go test ./test/tty/. tmux must be installed (Debian package tmux);
// without it the test fails, unless CLOUDSTIC_TEST_NO_SERVERS=1 is set.
package tty
