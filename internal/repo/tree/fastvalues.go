package tree

// The value parsers of decodeCanonical's parser: strings, integers, ids,
// base64 and extended attributes, each in exactly the form Encode writes.

import (
	"encoding/base64"
	"math"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// str parses a string without escapes or control characters, in valid
// UTF-8 (encoding/json would replace invalid bytes).
func (p *parser) str() (string, bool) {
	b, ok := p.rawStr()
	if !ok {
		return "", false
	}
	return string(b), true
}

// strStop marks the bytes rawStr stops at: the closing quote, what the
// fast path leaves to encoding/json (an escape, a control character), and
// the first byte of a multi-byte UTF-8 sequence.
var strStop = func() (t [256]bool) {
	t['"'], t['\\'] = true, true
	for c := range 0x20 {
		t[c] = true
	}
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// rawStr is str without the copy: the bytes are the input's.
func (p *parser) rawStr() ([]byte, bool) {
	if !p.lit(`"`) {
		return nil, false
	}
	start := p.pos
	ascii := true
	for ; p.pos < len(p.data); p.pos++ {
		c := p.data[p.pos]
		if !strStop[c] {
			continue
		}
		switch {
		case c == '"':
			s := p.data[start:p.pos]
			p.pos++
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		default:
			ascii = false
		}
	}
	return nil, false
}

// strAgain is str that returns *last when the string is the same, and
// keeps a new one in *last.
func (p *parser) strAgain(last *string) (string, bool) {
	b, ok := p.rawStr()
	switch {
	case !ok:
		return "", false
	case string(b) != *last:
		*last = string(b)
	}
	return *last, true
}

// nodeType parses a node's type, without allocating for the known types
// (nodeTypes).
func (p *parser) nodeType() (Type, bool) {
	b, ok := p.rawStr()
	if !ok {
		return "", false
	}
	for _, t := range nodeTypes {
		if string(b) == string(t) {
			return t, true
		}
	}
	return Type(b), true
}

// nodeTypes are the types a node may have (Decode refuses others).
var nodeTypes = [...]Type{TypeFile, TypeDir, TypeSymlink, TypeFIFO, TypeCharDev, TypeBlkDev, TypeSocket}

// digits returns the run of ASCII digits at the input, with no leading
// zero (unless it is "0"), or false.
func (p *parser) digits() ([]byte, bool) {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	d := p.data[start:p.pos]
	if len(d) == 0 || (len(d) > 1 && d[0] == '0') {
		return nil, false
	}
	// A fraction or exponent follows: not an integer of ours.
	if p.pos < len(p.data) && (p.data[p.pos] == '.' || p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		return nil, false
	}
	return d, true
}

// unsigned parses an integer of at most limit (strconv.ParseUint's
// answer, without the string it would allocate).
func (p *parser) unsigned(limit uint64) (uint64, bool) {
	d, ok := p.digits()
	if !ok {
		return 0, false
	}
	var v uint64
	for _, c := range d {
		x := uint64(c - '0')
		if v > (limit-x)/10 {
			return 0, false // out of range
		}
		v = v*10 + x
	}
	return v, true
}

func (p *parser) uint64() (uint64, bool) { return p.unsigned(math.MaxUint64) }

func (p *parser) uint32() (uint32, bool) {
	v, ok := p.unsigned(math.MaxUint32)
	return uint32(v), ok
}

func (p *parser) int64() (int64, bool) {
	if p.lit("-") {
		v, ok := p.unsigned(1 << 63)
		return -int64(v), ok // -(1<<63) wraps to itself: math.MinInt64
	}
	v, ok := p.unsigned(math.MaxInt64)
	return int64(v), ok
}

// id parses an id in quotes. A valid id's 64 hex digits hold no quote,
// escape or control character, so when a quote closes them and they decode,
// rawStr's scan of them is skipped; anything else is left to it.
func (p *parser) id() (id.ID, bool) {
	var v id.ID
	if end := p.pos + 1 + 2*len(v); end < len(p.data) && p.data[p.pos] == '"' && p.data[end] == '"' &&
		v.UnmarshalText(p.data[p.pos+1:end]) == nil {
		p.pos = end + 1
		return v, true
	}
	b, ok := p.rawStr()
	if !ok {
		return id.ID{}, false
	}
	return v, v.UnmarshalText(b) == nil
}

// ids parses a non-empty array of ids (Encode omits an empty one).
func (p *parser) ids() ([]id.ID, bool) {
	if !p.lit("[") {
		return nil, false
	}
	var out []id.ID
	for {
		v, ok := p.id()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.lit(",") {
			continue
		}
		return out, p.lit("]")
	}
}

// bytes parses base64 in a string, as encoding/json does for []byte.
func (p *parser) bytes() ([]byte, bool) {
	b, ok := p.rawStr()
	if !ok {
		return nil, false
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(out, b)
	return out[:n], err == nil
}

// xattrs parses a non-empty array of {"name":...,"value":...}; a value is
// base64 or null (a nil value).
func (p *parser) xattrs() ([]Xattr, bool) {
	if !p.lit("[") {
		return nil, false
	}
	var out []Xattr
	for {
		var x Xattr
		var ok bool
		if !p.lit(`{"name":`) {
			return nil, false
		}
		if x.Name, ok = p.str(); !ok || !p.lit(`,"value":`) {
			return nil, false
		}
		if !p.lit("null") {
			if x.Value, ok = p.bytes(); !ok {
				return nil, false
			}
		}
		if !p.lit("}") {
			return nil, false
		}
		out = append(out, x)
		if p.lit(",") {
			continue
		}
		return out, p.lit("]")
	}
}
