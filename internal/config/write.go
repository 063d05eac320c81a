package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// ErrExists marks an Add of a name the file already defines.
var ErrExists = errors.New("already defined")

// AddStore adds a store entry; the file is written by Save.
func (f *File) AddStore(name string, s Store) error {
	if _, ok := f.Stores[name]; ok {
		return fmt.Errorf("store %q: %w in %s", name, ErrExists, f.Path)
	}
	if err := f.appendEntry("stores", name, s); err != nil {
		return err
	}
	f.Stores[name] = s
	return nil
}

// AddProfile adds a profile entry; the file is written by Save.
func (f *File) AddProfile(name string, p Profile) error {
	if _, ok := f.Profiles[name]; ok {
		return fmt.Errorf("profile %q: %w in %s", name, ErrExists, f.Path)
	}
	if p.Store != "" {
		if _, err := f.Store(p.Store); err != nil {
			return err
		}
	}
	if err := f.appendEntry("profiles", name, p); err != nil {
		return err
	}
	f.Profiles[name] = p
	return nil
}

// AddAuth adds an auth entry; the file is written by Save.
func (f *File) AddAuth(name string, a Auth) error {
	if _, ok := f.Auth[name]; ok {
		return fmt.Errorf("auth %q: %w in %s", name, ErrExists, f.Path)
	}
	if err := f.appendEntry("auth", name, a); err != nil {
		return err
	}
	if f.Auth == nil {
		f.Auth = map[string]Auth{}
	}
	f.Auth[name] = a
	return nil
}

// appendEntry adds name: value at the end of a top-level section of the
// YAML tree, creating the document and the section when missing. Nothing
// else in the tree changes, so comments and order survive.
func (f *File) appendEntry(section, name string, value any) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: bad name %q (start with a letter or digit; use only letters, digits, '.', '-' and '_')", ErrInvalid, name)
	}
	if f.doc == nil {
		f.doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
		f.doc.Content[0].Content = append(f.doc.Content[0].Content, scalar("version"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"})
	}
	root := f.doc.Content[0]
	_, sec := lookup(root, section)
	if sec == nil || sec.Kind != yaml.MappingNode {
		newSec := &yaml.Node{Kind: yaml.MappingNode}
		if sec == nil {
			root.Content = append(root.Content, scalar(section), newSec)
		} else { // "stores:" with no value is a null scalar: replace it
			*sec = *newSec
			newSec = sec
		}
		sec = newSec
	}
	var v yaml.Node
	if err := v.Encode(value); err != nil {
		return fmt.Errorf("encoding %s.%s: %w", section, name, err)
	}
	sec.Content = append(sec.Content, scalar(name), &v)
	return nil
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// Save writes the file atomically: a temporary file in the same
// directory, synced, mode 0600, renamed over the old one. The directory is
// created (0700) when missing.
func (f *File) Save() error {
	data, err := f.encode()
	if err != nil {
		return err
	}
	// What we write must load again: a bug here must not cost the user
	// the file.
	if _, err := Parse(f.Path, data); err != nil {
		return fmt.Errorf("refusing to write %s: %w", f.Path, err)
	}
	return WriteFileAtomic(f.Path, data)
}

// encode renders the file's YAML tree as Save writes it.
func (f *File) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	doc := f.doc
	if doc == nil {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f.Path, err)
	}
	return buf.Bytes(), nil
}

// WriteFileAtomic replaces path with data (mode 0600) through a synced
// temporary file and a rename, so a crash leaves the old or the new file.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()           // already failing; the write error is the one to report
			_ = os.Remove(tmp.Name()) // best effort: do not leave the temporary behind
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: some file systems cannot sync a directory
		_ = d.Close()
	}
	return nil
}
