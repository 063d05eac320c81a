package termtext

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON returns data, a JSON text such as encoding/json writes, with every
// character a terminal could act on written as a \u escape: DEL, C0 and C1
// controls other than the tab, newline and carriage return that separate
// tokens, format characters such as the bidi controls, line and paragraph
// separators, and every other rune that is not graphic. encoding/json
// escapes C0 controls in strings but writes DEL, C1 controls and bidi
// controls as they are, and a RawMessage (cat lock's payload) passes
// through unescaped. Outside strings, JSON allows only ASCII, so these
// characters stand inside strings and the result decodes to the same
// values. A byte of invalid UTF-8 becomes \ufffd, as encoding/json writes
// it.
func JSON(data []byte) []byte {
	var out []byte // nil until the first rune that needs an escape
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			r = unicode.ReplacementChar // what the escape stands for
		} else if r == '\t' || r == '\n' || r == '\r' || unicode.IsGraphic(r) {
			if out != nil {
				out = append(out, data[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(data)+16), data[:i]...)
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	if out == nil {
		return data
	}
	return out
}
