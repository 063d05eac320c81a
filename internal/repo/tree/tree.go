package tree

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrCorrupt means a tree blob could not be decoded or breaks the rules.
var ErrCorrupt = errors.New("corrupt tree")

// Tree is one directory's entries.
type Tree struct {
	Nodes []Node `json:"nodes"`
}

// Encode sorts the nodes by name and serialises the tree. Names and link
// targets that are not valid UTF-8 travel in the *Raw fields.
func Encode(t *Tree) ([]byte, error) {
	nodes := make([]Node, len(t.Nodes))
	copy(nodes, t.Nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for i := range nodes {
		n := &nodes[i]
		n.NameRaw, n.TargetRaw = nil, nil
		if !utf8.ValidString(n.Name) {
			n.NameRaw, n.Name = []byte(n.Name), ""
		}
		if !utf8.ValidString(n.LinkTarget) {
			n.TargetRaw, n.LinkTarget = []byte(n.LinkTarget), ""
		}
	}
	return json.Marshal(Tree{Nodes: nodes})
}

// Decode parses a tree blob and validates every name: a hostile repository
// must not be able to smuggle "..", "/" or NUL into a path.
func Decode(data []byte) (*Tree, error) {
	t, ok := decodeCanonical(data)
	if !ok {
		t = &Tree{}
		if err := json.Unmarshal(data, t); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	seen := make(map[string]bool, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.NameRaw != nil {
			n.Name, n.NameRaw = string(n.NameRaw), nil
		}
		if n.TargetRaw != nil {
			n.LinkTarget, n.TargetRaw = string(n.TargetRaw), nil
		}
		if err := CheckName(n.Name); err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("%w: duplicate name %q", ErrCorrupt, n.Name)
		}
		seen[n.Name] = true
		if !slices.Contains(nodeTypes[:], n.Type) {
			return nil, fmt.Errorf("%w: %q has unknown type %q", ErrCorrupt, n.Name, n.Type)
		}
		if n.Type == TypeDir && n.Subtree.IsZero() {
			return nil, fmt.Errorf("%w: directory %q has no subtree", ErrCorrupt, n.Name)
		}
	}
	return t, nil
}

// CheckName rejects names that are not a single safe path element.
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%w: unsafe entry name %q", ErrCorrupt, name)
	}
	return nil
}
