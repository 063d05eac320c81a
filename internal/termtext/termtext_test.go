package termtext_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/termtext"
)

// hostile are the characters an attacker uses on a terminal, one each.
var hostile = []string{
	"\x1b[2J",              // clear the screen
	"\x1b]0;pwned\x07",     // OSC 0: set the window title
	"\r", "\n", "\b", "\t", // overwrite, forge lines
	"\x00", "\x7f", // NUL, DEL
	"\u009b2J",                                                           // C1 CSI, as UTF-8
	"\x9b",                                                               // C1 CSI, a raw byte (invalid UTF-8)
	"\xff",                                                               // invalid UTF-8
	"\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c", // bidi controls
	"\u200b", "\ufeff", // zero-width space, BOM
	"\u2028", "\u2029", // line and paragraph separators
	"\U000e0041", // a tag character
}

// assertSafe fails unless every rune of out is graphic.
func assertSafe(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Safe(%q) = %q: invalid UTF-8", in, out)
	}
	for _, r := range out {
		if !unicode.IsGraphic(r) {
			t.Fatalf("Safe(%q) = %q holds %U", in, out, r)
		}
	}
}

func TestSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"ascii", "report.txt", "report.txt"},
		{"spaces and punctuation", "my file (1) [final] #2 $HOME 'x' \"y\" a\\b", "my file (1) [final] #2 $HOME 'x' \"y\" a\\b"},
		{"letters of other scripts", "Jürgen_日本語_Ελληνικά_עברית_العربية", "Jürgen_日本語_Ελληνικά_עברית_العربية"},
		{"other spaces", "a\u00a0b\u3000c", "a\u00a0b\u3000c"},
		{"emoji and marks", "😀 e\u0301", "😀 e\u0301"},
		{"a literal replacement character", "a\ufffdb", "a\ufffdb"},
		{"empty", "", ""},
		{"clear screen", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"window title", "\x1b]0;pwned\x07", `"\x1b]0;pwned\a"`},
		{"carriage return and newline", "x\ry\nz", `"x\ry\nz"`},
		{"tab", "a\tb", `"a\tb"`},
		{"DEL", "a\x7f", `"a\x7f"`},
		{"C1 CSI", "\u009b2J", `"\u009b2J"`},
		{"invalid UTF-8", "a\x9bb\xff", `"a\x9bb\xff"`},
		{"bidi override", "exe.\u202etxt", `"exe.\u202etxt"`},
		{"bidi isolate", "\u2066a\u2069", `"\u2066a\u2069"`},
		{"arabic letter mark", "a\u061cb", `"a\u061cb"`},
		{"zero width space", "a\u200bb", `"a\u200bb"`},
		{"quotes inside a quoted name", "\"a\"\n", `"\"a\"\n"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := termtext.Safe(tc.in)
			if got != tc.want {
				t.Errorf("Safe(%q) = %s, want %s", tc.in, got, tc.want)
			}
			assertSafe(t, tc.in, got)
			if got != tc.in {
				back, err := strconv.Unquote(got)
				if err != nil || back != tc.in {
					t.Errorf("Unquote(%s) = %q, %v: not the original %q", got, back, err, tc.in)
				}
			}
			if again := termtext.Safe(got); again != got {
				t.Errorf("Safe is not stable: Safe(%s) = %s", got, again)
			}
		})
	}
	for _, h := range hostile {
		assertSafe(t, h, termtext.Safe("name"+h+"end"))
	}
}

// errPanics is an error whose Error method panics (a nil pointer).
type errPanics struct{ msg *string }

func (e *errPanics) Error() string { return *e.msg }

func TestSprintf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, format string
		args         []any
		want         string
	}{
		{"plain arguments pass", "new      %s", []any{"docs/report.txt"}, "new      docs/report.txt"},
		{"a hostile name is quoted alone", "new      %s", []any{"a\x1b[2J.txt"}, `new      "a\x1b[2J.txt"`},
		{"%v of a string", "%v: %d bytes", []any{"a\nb", 3}, `"a\nb": 3 bytes`},
		{"%q quotes once", "-files-from: %q matches no file", []any{"a\x1bb"}, `-files-from: "a\x1bb" matches no file`},
		{"width is kept", "[%-6s]", []any{"ab"}, "[ab    ]"},
		{"an error's text", "%s: %v", []any{"x\u202ey", errors.New("open x\u202ey: denied")}, `"x\u202ey": "open x\u202ey: denied"`},
		{"a wrapped error", "restore: %v", []any{fmt.Errorf("reading %s: %w", "a\rb", errors.New("EOF"))}, `restore: "reading a\rb: EOF"`},
		{"other kinds fall back to quoting the whole message", "tags %v", []any{[]string{"a\x1b"}}, `"tags [a\x1b]"`},
		{"bytes too", "%s", []any{[]byte("a\x07")}, `"a\a"`},
		{"an Error method that panics", "%v", []any{&errPanics{}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := termtext.Sprintf(tc.format, tc.args...)
			assertSafe(t, tc.format, got)
			if tc.want != "" && got != tc.want {
				t.Errorf("Sprintf(%q, %q) = %s, want %s", tc.format, tc.args, got, tc.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, h := range append(hostile, "plain", "日本語", "😀", "\U0001f600\u202e") {
		t.Run(strconv.Quote(h), func(t *testing.T) {
			t.Parallel()
			v := map[string]any{"name": "x" + h + "y", "list": []string{h, h}}
			enc, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out := termtext.JSON(enc)
			for _, r := range string(out) {
				if !unicode.IsGraphic(r) && r != '\n' {
					t.Fatalf("JSON(%s) holds %U", enc, r)
				}
			}
			var back, want map[string]any
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("JSON(%s) = %s: %v", enc, out, err)
			}
			if err := json.Unmarshal(enc, &want); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(back) != fmt.Sprint(want) {
				t.Errorf("JSON changed the values: %q, want %q", back, want)
			}
		})
	}
	t.Run("unchanged when nothing needs an escape", func(t *testing.T) {
		in := []byte("{\n\t\"a\": \"b\\u001b\"\r\n}")
		if out := termtext.JSON(in); string(out) != string(in) {
			t.Errorf("JSON(%q) = %q", in, out)
		}
	})
	t.Run("a raw payload", func(t *testing.T) {
		in := []byte("{\"holder\":\"\u009b2J\x9b\u202e\x7f\"}")
		want := `{"holder":"\u009b2J\ufffd\u202e\u007f"}`
		if out := termtext.JSON(in); string(out) != want {
			t.Errorf("JSON(%q) = %s, want %s", in, out, want)
		}
	})
}

// FuzzSafe: the result never holds a character that is not graphic,
// graphic input passes unchanged, and anything else comes back exactly
// through strconv.Unquote.
func FuzzSafe(f *testing.F) {
	for _, h := range hostile {
		f.Add("file" + h + "name")
	}
	f.Add("Jürgen 日本語 😀")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		out := termtext.Safe(s)
		assertSafe(t, s, out)
		printable := utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0
		if printable {
			if out != s {
				t.Fatalf("Safe(%q) = %q: printable input changed", s, out)
			}
			return
		}
		if back, err := strconv.Unquote(out); err != nil || back != s {
			t.Fatalf("Safe(%q) = %s: Unquote gives %q, %v", s, out, back, err)
		}
	})
}

// FuzzJSON: a JSON document of any string comes out of JSON free of
// characters that are not graphic (besides the newlines of the layout),
// still valid, and decoding to the same string.
func FuzzJSON(f *testing.F) {
	for _, h := range hostile {
		f.Add("file" + h + "name")
	}
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		enc, err := json.MarshalIndent([]string{s}, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		out := termtext.JSON(enc)
		for _, r := range string(out) {
			if !unicode.IsGraphic(r) && r != '\n' && r != '\t' {
				t.Fatalf("JSON(%s) = %s holds %U", enc, out, r)
			}
		}
		var back, want []string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%s) = %s: %v", enc, out, err)
		}
		if err := json.Unmarshal(enc, &want); err != nil {
			t.Fatal(err)
		}
		if len(back) != 1 || back[0] != want[0] {
			t.Fatalf("JSON(%s) = %s decodes to %q, want %q", enc, out, back, want)
		}
	})
}
