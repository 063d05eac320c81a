package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrInvalid marks a profiles file that does not follow the schema; the
// *Error it comes with names the file, line and key.
var ErrInvalid = errors.New("invalid profiles file")

// ErrUnknownProfile and ErrUnknownStore mark names the file does not define.
var (
	ErrUnknownProfile = errors.New("no such profile")
	ErrUnknownStore   = errors.New("no such store")
)

// Error is a schema error at one place of a profiles file.
type Error struct {
	File string
	Line int
	Key  string // dotted path, e.g. stores.nas.uri
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// Unwrap makes every *Error match ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// File is a loaded profiles.yaml. The maps are what the file says; the
// YAML tree behind them is kept so that a rewrite changes only what was
// added.
type File struct {
	Path string
	// Mode is the permission bits of the file Load read (0 from Parse),
	// for Exposure.
	Mode     fs.FileMode
	Version  int
	Stores   map[string]Store
	Auth     map[string]Auth
	Profiles map[string]Profile

	doc *yaml.Node // the document node; nil until the file has content
}

// namePattern is Cloudstic's rule for store, auth and profile names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidName reports whether s may name a store, auth entry or profile.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// Empty returns a File with no entries that Save will create at path.
func Empty(path string) *File {
	return &File{Path: path, Version: 1, Stores: map[string]Store{}, Auth: map[string]Auth{}, Profiles: map[string]Profile{}}
}

// Load reads and validates the profiles file at path. A missing file is an
// error matching os.ErrNotExist.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fh.Close() }() // read-only: closing loses nothing
	info, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	f.Mode = info.Mode().Perm()
	return f, nil
}

// Parse validates data as the profiles file named path.
func Parse(path string, data []byte) (*File, error) {
	f := Empty(path)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalid, err)
	}
	if len(doc.Content) == 0 {
		return f, nil // an empty file holds no entries
	}
	f.doc = &doc
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, f.errAt(root, "(top level)", "want a mapping with version, stores, auth and profiles")
	}
	err := f.eachPair(root, "", func(key string, k, v *yaml.Node) error {
		switch key {
		case "version":
			if err := v.Decode(&f.Version); err != nil || f.Version != 1 {
				return f.errAt(v, key, "unsupported version "+v.Value+" (want 1)")
			}
			return nil
		case "stores":
			return loadSection(f, v, key, f.Stores)
		case "auth":
			return loadSection(f, v, key, f.Auth)
		case "profiles":
			return loadSection(f, v, key, f.Profiles)
		}
		return f.errAt(k, key, "unknown key (want version, stores, auth or profiles)")
	})
	if err != nil {
		return nil, err
	}
	return f, f.checkReferences()
}

// eachPair calls fn for each key of a mapping node, refusing duplicates.
func (f *File) eachPair(m *yaml.Node, prefix string, fn func(key string, k, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return f.errAt(k, prefix+k.Value, "duplicate key")
		}
		seen[k.Value] = true
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// loadSection decodes a name → entry mapping, checking names and keys.
func loadSection[T any](f *File, section *yaml.Node, name string, into map[string]T) error {
	if section.Kind == yaml.ScalarNode && section.Tag == "!!null" {
		return nil
	}
	if section.Kind != yaml.MappingNode {
		return f.errAt(section, name, "want a mapping of names to entries")
	}
	known := yamlKeys(reflect.TypeFor[T]())
	return f.eachPair(section, name+".", func(entry string, k, v *yaml.Node) error {
		path := name + "." + entry
		if !ValidName(entry) {
			return f.errAt(k, path, "bad name (start with a letter or digit; use only letters, digits, '.', '-' and '_')")
		}
		if v.Kind != yaml.MappingNode {
			return f.errAt(v, path, "want a mapping of fields")
		}
		err := f.eachPair(v, path+".", func(field string, fk, fv *yaml.Node) error {
			if !known[field] {
				return f.errAt(fk, path+"."+field, "unknown key"+suggestKey(field, known))
			}
			var probe T
			wrapper := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{fk, fv}}
			if err := wrapper.Decode(&probe); err != nil {
				return f.errAt(fv, path+"."+field, "wrong type of value "+strings.TrimSpace(fv.Value))
			}
			return nil
		})
		if err != nil {
			return err
		}
		var t T
		if err := v.Decode(&t); err != nil {
			return f.errAt(v, path, err.Error())
		}
		into[entry] = t
		return nil
	})
}

// checkReferences checks that profiles name existing stores and auth
// entries, and that secret references are well formed.
func (f *File) checkReferences() error {
	for name, p := range f.Profiles {
		if p.Store != "" {
			if _, ok := f.Stores[p.Store]; !ok {
				return f.errAtKey([]string{"profiles", name, "store"}, "names no store in stores")
			}
		}
		if p.AuthRef != "" {
			if _, ok := f.Auth[p.AuthRef]; !ok {
				return f.errAtKey([]string{"profiles", name, "auth_ref"}, "names no entry in auth")
			}
		}
	}
	for name, s := range f.Stores {
		if s.URI == "" {
			return f.errAtKey([]string{"stores", name}, "uri is required")
		}
		for field, ref := range s.SecretFields() {
			if ref == "" {
				continue
			}
			if _, err := ParseRef(ref); err != nil {
				return f.errAtKey([]string{"stores", name, field}, err.Error())
			}
		}
	}
	return nil
}

func (f *File) errAt(n *yaml.Node, key, msg string) error {
	return &Error{File: f.Path, Line: n.Line, Key: key, Msg: msg}
}

// errAtKey reports msg at the node a key path leads to (its key's line).
func (f *File) errAtKey(path []string, msg string) error {
	line := 0
	if f.doc != nil {
		n := f.doc.Content[0]
		for _, p := range path {
			k, v := lookup(n, p)
			if k == nil {
				break
			}
			line, n = k.Line, v
		}
	}
	return &Error{File: f.Path, Line: line, Key: strings.Join(path, "."), Msg: msg}
}

// lookup returns the key and value nodes of key in mapping m.
func lookup(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// yamlKeys lists the YAML keys of a struct type's fields.
func yamlKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		keys[name] = true
	}
	return keys
}

// suggestKey returns " (did you mean X?)" for a known key close to field.
func suggestKey(field string, known map[string]bool) string {
	var names []string
	for k := range known {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if strings.Contains(k, field) || strings.Contains(field, k) || EditDistance(k, field) <= 2 {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, for "did you
// mean" suggestions (profile keys here, command names in the CLI).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Profile returns the named profile.
func (f *File) Profile(name string) (Profile, error) {
	p, ok := f.Profiles[name]
	if !ok {
		return p, fmt.Errorf("%w %q in %s", ErrUnknownProfile, name, f.Path)
	}
	return p, nil
}

// Store returns the named store.
func (f *File) Store(name string) (Store, error) {
	s, ok := f.Stores[name]
	if !ok {
		return s, fmt.Errorf("%w %q in %s", ErrUnknownStore, name, f.Path)
	}
	return s, nil
}

// ProfileNames returns the profile names in name order.
func (f *File) ProfileNames() []string { return sortedKeys(f.Profiles) }

// StoreNames returns the store names in name order.
func (f *File) StoreNames() []string { return sortedKeys(f.Stores) }

func sortedKeys[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
