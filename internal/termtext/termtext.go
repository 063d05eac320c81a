package termtext

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Safe returns s as it may be written to a terminal: s itself when every
// rune in it is graphic (unicode.IsGraphic: letters, marks, numbers,
// punctuation, symbols and spaces), and otherwise s quoted as a Go string
// literal (strconv.Quote), with each control character (C0, DEL, C1),
// format character (bidi controls such as U+202E, zero-width characters),
// line or paragraph separator, unassigned or private-use code point and
// byte of invalid UTF-8 written as an escape. The result never holds a
// character that is not graphic.
func Safe(s string) string {
	if graphic(s) {
		return s
	}
	return strconv.Quote(s)
}

// graphic reports whether s is valid UTF-8 made of graphic runes only.
func graphic(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false // a byte of invalid UTF-8
			}
		}
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// Sprintf formats like fmt.Sprintf for a terminal: each string and error
// argument is rendered with Safe (under a %q verb it is quoted by fmt
// instead, which escapes as Safe does), so a message naming a hostile file
// shows the name quoted and the rest as written; if an argument of another
// kind still brought a character that is not graphic, the whole message is
// rendered with Safe. The format itself is the caller's and trusted, but
// it must not hold a newline or other control character: the result would
// be quoted whole.
func Sprintf(format string, args ...any) string {
	rendered := make([]any, len(args))
	for i, arg := range args {
		switch v := arg.(type) {
		case string:
			rendered[i] = text(v)
		case error:
			rendered[i] = text(fmt.Sprint(v)) // fmt.Sprint survives an Error method that panics
		default:
			rendered[i] = arg
		}
	}
	return Safe(fmt.Sprintf(format, rendered...))
}

// text is an untrusted string argument of Sprintf.
type text string

// Format writes t rendered with Safe, under the verb, flags and width it
// was given; %q quotes the raw text as fmt does.
func (t text) Format(f fmt.State, verb rune) {
	s := string(t)
	if verb != 'q' {
		s = Safe(s)
	}
	// f is fmt's own buffer, whose writes cannot fail.
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), s)
}
