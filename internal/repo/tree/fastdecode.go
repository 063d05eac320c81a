package tree

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// decodeCanonical parses the exact form Encode writes (json.Marshal of a
// Tree: no whitespace, fields in struct order, strings without escapes)
// several times faster than encoding/json, which was over a quarter of a
// no-change backup's CPU. It reports false for anything else, and the
// caller then decodes with encoding/json, so it never decides what a tree
// means on its own: FuzzDecodeCanonical checks that whenever it succeeds it
// gives exactly what encoding/json gives.
func decodeCanonical(data []byte) (*Tree, bool) {
	p := parser{data: data}
	if !p.lit(`{"nodes":[`) {
		return nil, false
	}
	t := &Tree{Nodes: []Node{}}
	if p.lit("]") {
		return t, p.lit("}") && p.done()
	}
	for {
		var n Node
		if !p.node(&n) {
			return nil, false
		}
		t.Nodes = append(t.Nodes, n)
		if p.lit(",") {
			continue
		}
		return t, p.lit("]}") && p.done()
	}
}

// parser walks a canonical tree; every method reports false, without
// consuming input it cannot parse, on anything unexpected.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) done() bool { return p.pos == len(p.data) }

// lit consumes s if the input continues with it.
func (p *parser) lit(s string) bool {
	if len(p.data)-p.pos < len(s) || string(p.data[p.pos:p.pos+len(s)]) != s {
		return false
	}
	p.pos += len(s)
	return true
}

// fieldOrder is the position of a node's key in the order Encode writes
// them, or -1 for a key Node does not have.
func fieldOrder(key string) int {
	switch key {
	case "name":
		return 0
	case "type":
		return 1
	case "mode":
		return 2
	case "size":
		return 3
	case "mtime":
		return 4
	case "ctime":
		return 5
	case "btime":
		return 6
	case "dev":
		return 7
	case "ino":
		return 8
	case "links":
		return 9
	case "uid":
		return 10
	case "gid":
		return 11
	case "user":
		return 12
	case "group":
		return 13
	case "target":
		return 14
	case "rdev":
		return 15
	case "flags":
		return 16
	case "bsdflags":
		return 17
	case "winattrs":
		return 18
	case "sddl":
		return 19
	case "xattrs":
		return 20
	case "content":
		return 21
	case "subtree":
		return 22
	case "name_raw":
		return 23
	case "target_raw":
		return 24
	}
	return -1
}

// node parses one node object.
func (p *parser) node(n *Node) bool {
	if !p.lit("{") {
		return false
	}
	next := 0 // fieldOrder of the first key still allowed
	for first := true; ; first = false {
		if p.lit("}") {
			return true
		}
		if !first && !p.lit(",") {
			return false
		}
		key, ok := p.str()
		if !ok || !p.lit(":") {
			return false
		}
		i := fieldOrder(key)
		if i < next {
			return false // unknown, repeated or out of order
		}
		next = i + 1
		if !p.field(n, key) {
			return false
		}
	}
}

// field parses the value of one key into n.
func (p *parser) field(n *Node, key string) bool {
	var ok bool
	switch key {
	case "name":
		n.Name, ok = p.str()
	case "type":
		var s string
		s, ok = p.str()
		n.Type = Type(s)
	case "user":
		n.User, ok = p.str()
	case "group":
		n.Group, ok = p.str()
	case "target":
		n.LinkTarget, ok = p.str()
	case "sddl":
		n.SDDL, ok = p.str()
	case "mode":
		n.Mode, ok = p.uint32()
	case "uid":
		n.UID, ok = p.uint32()
	case "gid":
		n.GID, ok = p.uint32()
	case "size":
		n.Size, ok = p.uint64()
	case "dev":
		n.Device, ok = p.uint64()
	case "ino":
		n.Inode, ok = p.uint64()
	case "links":
		n.Links, ok = p.uint64()
	case "rdev":
		n.Rdev, ok = p.uint64()
	case "flags":
		n.Flags, ok = p.uint32()
	case "mtime":
		n.MTime, ok = p.int64()
	case "ctime":
		n.CTime, ok = p.int64()
	case "btime":
		n.BirthTime, ok = p.int64()
	case "bsdflags":
		n.BSDFlags, ok = p.uint32()
	case "winattrs":
		n.WinAttrs, ok = p.uint32()
	case "subtree":
		n.Subtree, ok = p.id()
	case "content":
		n.Content, ok = p.ids()
	case "xattrs":
		n.Xattrs, ok = p.xattrs()
	case "name_raw":
		n.NameRaw, ok = p.bytes()
	case "target_raw":
		n.TargetRaw, ok = p.bytes()
	}
	return ok
}

// str parses a string without escapes or control characters, in valid
// UTF-8 (encoding/json would replace invalid bytes).
func (p *parser) str() (string, bool) {
	b, ok := p.rawStr()
	if !ok {
		return "", false
	}
	return string(b), true
}

func (p *parser) rawStr() ([]byte, bool) {
	if !p.lit(`"`) {
		return nil, false
	}
	start := p.pos
	ascii := true
	for ; p.pos < len(p.data); p.pos++ {
		switch c := p.data[p.pos]; {
		case c == '"':
			s := p.data[start:p.pos]
			p.pos++
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

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

func (p *parser) uint64() (uint64, bool) {
	d, ok := p.digits()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d), 10, 64)
	return v, err == nil
}

func (p *parser) uint32() (uint32, bool) {
	d, ok := p.digits()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d), 10, 32)
	return uint32(v), err == nil
}

func (p *parser) int64() (int64, bool) {
	neg := p.lit("-")
	d, ok := p.digits()
	if !ok {
		return 0, false
	}
	s := string(d)
	if neg {
		s = "-" + s
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func (p *parser) id() (id.ID, bool) {
	b, ok := p.rawStr()
	if !ok {
		return id.ID{}, false
	}
	var v id.ID
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
