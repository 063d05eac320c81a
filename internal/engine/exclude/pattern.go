package exclude

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrPattern means an exclude pattern cannot be used.
var ErrPattern = errors.New("bad exclude pattern")

// pattern is one parsed gitignore line.
type pattern struct {
	// glob is matched with doublestar: against the base name when
	// basename is set, otherwise against the path relative to the
	// source root less prefix.
	glob string
	// prefix is the literal start of an anchored pattern, up to its first
	// wildcard: git compares it, then matches the rest with wildmatch, so
	// "a**/b" matches "ab" as "a" then "**/b" (see matchAnchored).
	prefix   string
	negate   bool // "!pat": a match re-includes
	dirOnly  bool // "pat/": matches directories only
	basename bool // no "/" but a trailing one: matches at any depth
}

// Matcher matches paths relative to a source root against gitignore
// patterns: the last pattern that matches decides. It does not know about
// parent directories: the walk never descends into an excluded directory,
// so, as in git, nothing below one can be re-included.
type Matcher struct {
	patterns []pattern
}

// posixClass finds the [:alpha:]-style classes git's wildmatch knows and
// doublestar does not: rejected rather than silently matched differently.
var posixClass = regexp.MustCompile(`\[:[a-z]+:\]`)

// NewMatcher parses lines in gitignore syntax, as from an exclude file:
// blank lines and lines starting with "#" are skipped, trailing spaces are
// dropped unless escaped with "\", "!" negates, a trailing "/" matches
// directories only, and a "/" elsewhere anchors the pattern at the root.
func NewMatcher(lines []string) (*Matcher, error) {
	m := &Matcher{}
	for _, line := range lines {
		p, ok, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		if ok {
			m.patterns = append(m.patterns, p)
		}
	}
	return m, nil
}

// ParsePattern checks one pattern given on its own (a -exclude flag): it
// must be a pattern, not a blank or comment line, since a lone "#x" was
// surely meant to match a name (write "\#x").
func ParsePattern(s string) error {
	_, ok, err := parseLine(s)
	if err != nil {
		return err
	}
	if !ok {
		if strings.HasPrefix(s, "#") {
			return fmt.Errorf("%w %q: a leading # makes a comment; write \\%s to match a name starting with #", ErrPattern, s, s)
		}
		return fmt.Errorf("%w %q: empty pattern", ErrPattern, s)
	}
	return nil
}

// ReadLines reads an exclude file's lines (LF or CRLF ends), to be given
// to NewMatcher.
func ReadLines(r io.Reader) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return lines, sc.Err()
}

// parseLine parses one line as git's dir.c does (add_patterns_from_buffer,
// parse_path_pattern); ok is false for blank and comment lines.
func parseLine(line string) (p pattern, ok bool, err error) {
	if line == "" || line[0] == '#' {
		return p, false, nil
	}
	s := trimTrailingSpaces(line)
	if s, p.negate = strings.CutPrefix(s, "!"); s == "" {
		return p, false, nil
	}
	if s, p.dirOnly = strings.CutSuffix(s, "/"); s == "" {
		return p, false, nil // "/" alone: git matches nothing with it
	}
	p.basename = !strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if !p.basename {
		k := strings.IndexAny(s, `*?[\`)
		if k < 0 {
			k = len(s)
		}
		p.prefix, s = s[:k], s[k:]
	}
	s = trailingDoubleStar(s)
	if posixClass.MatchString(s) {
		return p, false, fmt.Errorf("%w %q: character classes like [:alpha:] are not supported", ErrPattern, line)
	}
	if !doublestar.ValidatePattern(s) {
		return p, false, fmt.Errorf("%w %q: unbalanced [ ] or a trailing \\", ErrPattern, line)
	}
	p.glob = s
	return p, true, nil
}

// trailingDoubleStar rewrites a trailing "/**" for doublestar. In git,
// "dir/**" matches everything inside dir but not dir itself, while
// doublestar's also matches dir: "dir/**/*" is git's meaning. A "**/**"
// (at the start or after a "/") is git's "**": its "**/" may match nothing.
func trailingDoubleStar(s string) string {
	for strings.HasSuffix(s, "**/**") && (len(s) == 5 || s[len(s)-6] == '/') {
		s = s[:len(s)-3]
	}
	if strings.HasSuffix(s, "/**") {
		s += "/*"
	}
	return s
}

// trimTrailingSpaces drops trailing spaces that are not escaped with a
// backslash, as git's trim_trailing_spaces.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// Empty says whether the matcher has no patterns.
func (m *Matcher) Empty() bool { return m == nil || len(m.patterns) == 0 }

// Match says whether the entry at rel (relative to the source root, "/"
// separated, without a leading "./") is excluded. isDir is whether the
// entry itself is a directory (a symlink to one is not).
func (m *Matcher) Match(rel string, isDir bool) bool {
	if m == nil {
		return false
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(m.patterns) - 1; i >= 0; i-- {
		p := &m.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		var name string
		switch {
		case p.basename:
			name = base
		case !strings.HasPrefix(rel, p.prefix):
			continue
		default:
			name = rel[len(p.prefix):]
		}
		// The pattern was validated, so Match cannot fail.
		if ok, _ := doublestar.Match(p.glob, name); ok { // validated in parseLine
			return !p.negate
		}
	}
	return false
}
