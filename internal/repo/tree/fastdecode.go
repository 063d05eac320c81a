package tree

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
	// user and group are the last owner names parsed: the nodes of a
	// directory mostly repeat them, and reusing the string saves an
	// allocation per node.
	user, group string
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

// A node's keys, numbered in the order Encode writes them.
const (
	fName = iota
	fType
	fMode
	fSize
	fMTime
	fCTime
	fBTime
	fDev
	fIno
	fLinks
	fUID
	fGID
	fUser
	fGroup
	fTarget
	fRdev
	fFlags
	fBSDFlags
	fWinAttrs
	fSDDL
	fXattrs
	fContent
	fSubtree
	fNameRaw
	fTargetRaw
)

// fieldOrder is the number of a node's key, or -1 for a key Node does not
// have.
func fieldOrder(key string) int {
	switch key {
	case "name":
		return fName
	case "type":
		return fType
	case "mode":
		return fMode
	case "size":
		return fSize
	case "mtime":
		return fMTime
	case "ctime":
		return fCTime
	case "btime":
		return fBTime
	case "dev":
		return fDev
	case "ino":
		return fIno
	case "links":
		return fLinks
	case "uid":
		return fUID
	case "gid":
		return fGID
	case "user":
		return fUser
	case "group":
		return fGroup
	case "target":
		return fTarget
	case "rdev":
		return fRdev
	case "flags":
		return fFlags
	case "bsdflags":
		return fBSDFlags
	case "winattrs":
		return fWinAttrs
	case "sddl":
		return fSDDL
	case "xattrs":
		return fXattrs
	case "content":
		return fContent
	case "subtree":
		return fSubtree
	case "name_raw":
		return fNameRaw
	case "target_raw":
		return fTargetRaw
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
		key, ok := p.rawStr()
		if !ok || !p.lit(":") {
			return false
		}
		i := fieldOrder(string(key)) // no allocation: only compared
		if i < next {
			return false // unknown, repeated or out of order
		}
		next = i + 1
		if !p.field(n, i) {
			return false
		}
	}
}

// field parses the value of key i (see fieldOrder) into n.
func (p *parser) field(n *Node, i int) bool {
	var ok bool
	switch i {
	case fName:
		n.Name, ok = p.str()
	case fType:
		n.Type, ok = p.nodeType()
	case fUser:
		n.User, ok = p.strAgain(&p.user)
	case fGroup:
		n.Group, ok = p.strAgain(&p.group)
	case fTarget:
		n.LinkTarget, ok = p.str()
	case fSDDL:
		n.SDDL, ok = p.str()
	case fMode:
		n.Mode, ok = p.uint32()
	case fUID:
		n.UID, ok = p.uint32()
	case fGID:
		n.GID, ok = p.uint32()
	case fSize:
		n.Size, ok = p.uint64()
	case fDev:
		n.Device, ok = p.uint64()
	case fIno:
		n.Inode, ok = p.uint64()
	case fLinks:
		n.Links, ok = p.uint64()
	case fRdev:
		n.Rdev, ok = p.uint64()
	case fFlags:
		n.Flags, ok = p.uint32()
	case fMTime:
		n.MTime, ok = p.int64()
	case fCTime:
		n.CTime, ok = p.int64()
	case fBTime:
		n.BirthTime, ok = p.int64()
	case fBSDFlags:
		n.BSDFlags, ok = p.uint32()
	case fWinAttrs:
		n.WinAttrs, ok = p.uint32()
	case fSubtree:
		n.Subtree, ok = p.id()
	case fContent:
		n.Content, ok = p.ids()
	case fXattrs:
		n.Xattrs, ok = p.xattrs()
	case fNameRaw:
		n.NameRaw, ok = p.bytes()
	case fTargetRaw:
		n.TargetRaw, ok = p.bytes()
	}
	return ok
}
