package forget

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
)

// Filter selects the snapshots forget considers. Zero fields match all.
type Filter struct {
	// Tags: a snapshot must carry every one of them.
	Tags   []string
	Source string
	Host   string
}

// Empty reports whether the filter lets every snapshot through.
func (f Filter) Empty() bool {
	return f.Source == "" && f.Host == "" && len(f.Tags) == 0
}

// Match reports whether s passes the filter.
func (f Filter) Match(s *snapshot.Snapshot) bool {
	if f.Source != "" && s.Source != f.Source {
		return false
	}
	if f.Host != "" && s.Hostname != f.Host {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(s.Tags, t) {
			return false
		}
	}
	return true
}

// GroupBy says which fields make two snapshots part of the same group.
type GroupBy struct {
	Source, Host, Path, Tags bool
}

// DefaultGroupBy is "source,host,path".
const DefaultGroupBy = "source,host,path"

// ParseGroupBy parses a comma-separated list of source, host, path and
// tags; the empty string puts every snapshot in one group.
func ParseGroupBy(s string) (GroupBy, error) {
	var g GroupBy
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "source":
			g.Source = true
		case "host":
			g.Host = true
		case "path":
			g.Path = true
		case "tags":
			g.Tags = true
		default:
			return g, fmt.Errorf("-group-by %q: unknown field %q (want source, host, path, tags)", s, f)
		}
	}
	return g, nil
}

// GroupKey identifies a group; fields not grouped by are empty.
type GroupKey struct {
	Source string   `json:"source,omitempty"`
	Host   string   `json:"host,omitempty"`
	Path   string   `json:"path,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

// IsZero reports whether the key groups by nothing: one group holds every
// snapshot considered (forget by id, or -group-by "").
func (k GroupKey) IsZero() bool {
	return k.Source == "" && k.Host == "" && k.Path == "" && k.Tags == nil
}

// String describes the key for humans.
func (k GroupKey) String() string {
	var parts []string
	if k.Source != "" {
		parts = append(parts, "source "+k.Source)
	}
	if k.Host != "" {
		parts = append(parts, "host "+k.Host)
	}
	if k.Path != "" {
		parts = append(parts, "path "+k.Path)
	}
	if k.Tags != nil {
		parts = append(parts, "tags ["+strings.Join(k.Tags, ",")+"]")
	}
	if len(parts) == 0 {
		return "all snapshots"
	}
	return strings.Join(parts, ", ")
}

func (k GroupKey) id() string {
	return k.Source + "\x00" + k.Host + "\x00" + k.Path + "\x00" + strings.Join(k.Tags, "\x00")
}

// Key returns s's group key.
func (g GroupBy) Key(s *snapshot.Snapshot) GroupKey {
	var k GroupKey
	if g.Source {
		k.Source = s.Source
	}
	if g.Host {
		k.Host = s.Hostname
	}
	if g.Path {
		k.Path = s.Path
	}
	if g.Tags {
		k.Tags = append([]string{}, s.Tags...)
		sort.Strings(k.Tags)
	}
	if c := s.Cloud; c != nil {
		// A cloud drive folder is the same from any host and under any
		// name: its ids say which it is (as the parent lookup does).
		if g.Source {
			k.Source = strings.TrimSuffix(c.Type, "-changes")
		}
		if g.Path {
			k.Path = c.DriveID + "://" + c.RootID
		}
		k.Host = ""
	}
	return k
}

// Group is a set of snapshots sharing a key.
type Group struct {
	Key       GroupKey
	Snapshots []snapshot.WithID
}

// Split groups snaps by g, groups ordered by key.
func Split(snaps []snapshot.WithID, g GroupBy) []Group {
	byID := make(map[string]int)
	var out []Group
	for _, s := range snaps {
		k := g.Key(s.Snapshot)
		i, ok := byID[k.id()]
		if !ok {
			i = len(out)
			byID[k.id()] = i
			out = append(out, Group{Key: k})
		}
		out[i].Snapshots = append(out[i].Snapshots, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.id() < out[j].Key.id() })
	return out
}
