// Package cmdoutput runs a program whose standard output is backed up
// (backup -stdin-from-command): its Reader ends cleanly only when the
// program exited with status 0, so that a failed dump never becomes a
// snapshot.
package cmdoutput
