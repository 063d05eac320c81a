package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// find -json is Cloudstic's FindResult: its fields under its names and
// types, with ours added where we know more (docs/cli.md marks them).

// findResult is find -json.
type findResult struct {
	Query             findQuery    `json:"query"`
	SnapshotsSearched int          `json:"snapshots_searched"`
	EntriesScanned    int          `json:"entries_scanned"`
	MetaFetched       int          `json:"meta_fetched"` // always 0: there are no per-file metadata objects
	Matches           []*findMatch `json:"matches"`
	Truncated         bool         `json:"truncated"`
	Warnings          []string     `json:"warnings,omitempty"`
	GroupedBy         string       `json:"grouped_by"` // always "file"
	Elapsed           string       `json:"elapsed,omitempty"`
}

// findQuery is Cloudstic's FindQuery for the flags both tools have, plus
// ours (Patterns, PathPrefix, MinSize, MaxSize).
type findQuery struct {
	Name       string           `json:"name,omitempty"`
	Path       string           `json:"path,omitempty"`
	IgnoreCase bool             `json:"ignore_case,omitempty"`
	Size       *findSizeCompare `json:"size,omitempty"`
	Newer      string           `json:"newer,omitempty"`
	Older      string           `json:"older,omitempty"`
	Snapshots  []string         `json:"snapshots,omitempty"`
	MaxResults int              `json:"max_results,omitempty"`
	Patterns   []string         `json:"patterns,omitempty"`
	PathPrefix string           `json:"path_prefix,omitempty"`
	MinSize    int64            `json:"min_size,omitempty"`
	MaxSize    *int64           `json:"max_size,omitempty"`
}

// findSizeCompare is Cloudstic's SizeCompare: "+" at least, "-" at most,
// "=" exactly Bytes.
type findSizeCompare struct {
	Op    string `json:"op"`
	Bytes int64  `json:"bytes"`
}

// newFindQuery describes opts (and the flags as given) as Cloudstic does.
// One pattern is Cloudstic's name or path (by whether it holds a "/");
// several have no Cloudstic field and are only in Patterns. The size is
// Cloudstic's only when it is one bound or an exact size.
func newFindQuery(opts operation.FindOptions, newer, older string, refs []string, maxResults int) findQuery {
	q := findQuery{IgnoreCase: opts.IgnoreCase, Newer: newer, Older: older, Snapshots: refs,
		MaxResults: maxResults, Patterns: opts.Patterns, PathPrefix: opts.PathPrefix, MinSize: opts.MinSize}
	if len(opts.Patterns) == 1 {
		if p := opts.Patterns[0]; strings.Contains(p, "/") {
			q.Path = p
		} else {
			q.Name = p
		}
	}
	if opts.HasMaxSize {
		q.MaxSize = &opts.MaxSize
	}
	switch {
	case opts.HasMaxSize && opts.MinSize == opts.MaxSize:
		q.Size = &findSizeCompare{Op: "=", Bytes: opts.MaxSize}
	case opts.HasMaxSize && opts.MinSize == 0:
		q.Size = &findSizeCompare{Op: "-", Bytes: opts.MaxSize}
	case !opts.HasMaxSize && opts.MinSize > 0:
		q.Size = &findSizeCompare{Op: "+", Bytes: opts.MinSize}
	}
	return q
}

// findMatch is Cloudstic's FileMatch: one file (a path of a source, of
// one type) with its versions, newest first. FileID is the path, which
// is what identifies a file here; Path and SourceURI are ours.
type findMatch struct {
	FileID    string         `json:"file_id,omitempty"`
	Source    *listSourceCS  `json:"source,omitempty"`
	Type      string         `json:"type,omitempty"`
	Versions  []*findVersion `json:"versions"`
	Path      string         `json:"path"`
	SourceURI string         `json:"source_uri"`

	nodeType tree.Type
	byRef    map[string]*findVersion
	hits     []findHit // in search order, for the text output
}

// findHit is one snapshot holding a findMatch's file.
type findHit struct {
	snap snapshot.WithID
	node *tree.Node
}

// findVersion is Cloudstic's FileVersion: one state of the file (its
// entry, content and metadata, hashed into Ref) and the snapshots holding
// it, newest first. Mtime is in Unix seconds, Mode the permission bits.
type findVersion struct {
	Ref       string            `json:"ref"`
	FileID    string            `json:"file_id"`
	Name      string            `json:"name"`
	Paths     []string          `json:"paths"`
	Type      string            `json:"type,omitempty"`
	Size      int64             `json:"size"`
	Mtime     int64             `json:"mtime"`
	Mode      uint32            `json:"mode,omitempty"`
	Snapshots []findSnapshotRef `json:"snapshots"`
	FirstSeen string            `json:"first_seen"`
	LastSeen  string            `json:"last_seen"`

	latest time.Time
}

// findSnapshotRef is Cloudstic's SnapshotRef: "snapshot/ID", the number
// list gives the snapshot, and its time (RFC 3339, as list's Snap).
type findSnapshotRef struct {
	Ref     string `json:"ref"`
	Seq     int    `json:"seq"`
	Created string `json:"created"`

	time time.Time
}

// findFileType is Cloudstic's type name for t: "file" and "folder"; ours
// for the types Cloudstic has not.
func findFileType(t tree.Type) string {
	if t == tree.TypeDir {
		return "folder"
	}
	return string(t)
}

// newFindMatch starts the match of path p (from the snapshot root, no
// leading "/") of type t in s's source.
func newFindMatch(s snapshot.WithID, p string, t tree.Type) *findMatch {
	return &findMatch{FileID: p, Type: findFileType(t), Path: p, SourceURI: s.Source, nodeType: t,
		Source:   &listSourceCS{Type: sourceType(s.Source), Account: s.Hostname, Path: s.Path},
		Versions: []*findVersion{}, byRef: map[string]*findVersion{}}
}

// add records that snapshot s, numbered seq, holds n at the match's path.
func (f *findMatch) add(s snapshot.WithID, seq int, n *tree.Node) {
	f.hits = append(f.hits, findHit{snap: s, node: n})
	ref := nodeRef(n)
	v := f.byRef[ref]
	if v == nil {
		v = &findVersion{Ref: ref, FileID: f.FileID, Name: path.Base("/" + f.Path), Paths: []string{f.Path},
			Type: f.Type, Size: int64(n.Size), Mtime: time.Unix(0, n.MTime).Unix(), Mode: n.Mode}
		f.byRef[ref] = v
		f.Versions = append(f.Versions, v)
	}
	v.Snapshots = append(v.Snapshots, findSnapshotRef{Ref: "snapshot/" + s.ID.String(), Seq: seq,
		Created: s.Time.Local().Format(time.RFC3339), time: s.Time})
}

// finish orders the snapshots of each version and the versions newest
// first, as Cloudstic does, and fills FirstSeen and LastSeen.
func (f *findMatch) finish() {
	for _, v := range f.Versions {
		sort.SliceStable(v.Snapshots, func(i, j int) bool {
			if !v.Snapshots[i].time.Equal(v.Snapshots[j].time) {
				return v.Snapshots[i].time.After(v.Snapshots[j].time)
			}
			return v.Snapshots[i].Seq > v.Snapshots[j].Seq
		})
		v.latest = v.Snapshots[0].time
		v.LastSeen, v.FirstSeen = v.Snapshots[0].Created, v.Snapshots[len(v.Snapshots)-1].Created
	}
	sort.SliceStable(f.Versions, func(i, j int) bool { return f.Versions[i].latest.After(f.Versions[j].latest) })
}

// nodeRef names one state of an entry: "node/" and the SHA-256 of its
// encoding, so two snapshots share a version exactly when they hold the
// same entry. It is no object of the repository.
func nodeRef(n *tree.Node) string {
	b, err := json.Marshal(n)
	if err != nil { // a tree.Node always encodes; keep the versions apart rather than fail
		return "node/" + n.Name
	}
	sum := sha256.Sum256(b)
	return "node/" + hex.EncodeToString(sum[:])
}
