// Package termtext renders text that came from outside the program (file
// names, symlink targets, tags, host and user names, lock holders, key
// slot labels, store keys: anything read from a repository or a backup
// source) for a terminal.
//
// A store writer without the key can forge lock payloads and key slot
// labels; a source can hold any bytes but "/" and NUL in its file names.
// Written raw, such text can clear the screen or set the window title
// (ESC sequences, C1 controls), overwrite what was printed before (CR,
// backspace), forge extra lines of output (newlines) or show its
// characters in another order than they are stored (Unicode bidi
// controls). Every front end (internal/cli, internal/ui, a later TUI) and
// every lower layer that builds a message from such text renders it with
// Safe.
//
// The convention, like git's for path names and restic's for its output
// lines: text whose every character is graphic (letters, marks, numbers,
// punctuation, symbols, spaces of any script) is shown as it is, so
// ordinary names look ordinary; any other text is shown whole as a Go
// string literal ("evil\x1b[2J.txt", "\u202etxt.exe"), which
// strconv.Unquote turns back into the exact bytes. A printable name that
// itself looks like a quoted string is shown as it is; the -json output
// is exact in every case.
package termtext
