package backup

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
)

// errNoSeed means the parent snapshot cannot stand for the drive as it
// was (see parentItems).
var errNoSeed = errors.New("the previous snapshot's tree cannot seed an incremental scan")

// driveRecord is the snapshot's record of a cloud drive source.
func driveRecord(d source.Drive) *snapshot.Cloud {
	idn := d.Identity()
	return &snapshot.Cloud{Provider: idn.Provider, Type: idn.Type, Account: idn.Account, DriveID: idn.DriveID, RootID: idn.RootID}
}

// scanDrive lists a cloud drive before the walk: for a -changes source
// whose parent snapshot holds a change token, by the changes since,
// applied to the parent's items; else whole. It records the new token in
// the snapshot and warns when a change feed could not be used.
func scanDrive(ctx context.Context, r *repo.Repository, d source.Drive, snap *snapshot.Snapshot, parent *snapshot.WithID, opts Options) error {
	var since *source.Since
	if p := parent; d.Identity().Changes && p != nil && p.Cloud != nil && p.Cloud.ChangeToken != "" {
		why := fullScanReason(p.Snapshot, snap)
		if why == "" {
			items, err := parentItems(ctx, r, p)
			if err != nil {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				why = err.Error()
			}
			since = &source.Since{Token: p.Cloud.ChangeToken, Items: items}
		}
		if why != "" {
			since = nil
			warnf(opts, "%s: listing the whole drive instead of reading its changes: %s", snap.Source, why)
		}
	}
	res, err := d.Scan(ctx, since)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSource, snap.Source, err)
	}
	if res.FullScanReason != nil {
		warnf(opts, "%s: listed the whole drive: %v", snap.Source, res.FullScanReason)
	}
	snap.Cloud.ChangeToken = res.Token
	return nil
}

// fullScanReason says why the parent's items cannot be the start of an
// incremental scan, "" when they can: entries it could not read are
// missing from its tree (and would stay missing while they do not
// change), and with other exclude rules entries it left out may now be
// wanted.
func fullScanReason(parent, snap *snapshot.Snapshot) string {
	switch {
	case parent.Summary.Errors > 0:
		return "the previous backup could not read some entries"
	case !reflect.DeepEqual(parent.Excludes, snap.Excludes):
		return "the exclude rules changed"
	}
	return ""
}

// parentItems returns the drive items a snapshot of a drive stored: each
// entry's record (tree.Cloud) with its folder's id. Every tree is read
// once: a tree met twice, an entry without a record or a tree deeper
// than tree.MaxDepth is errNoSeed (a drive's snapshot has none; a
// crafted one is listed whole instead).
func parentItems(ctx context.Context, r *repo.Repository, parent *snapshot.WithID) ([]source.Item, error) {
	type dir struct {
		tree     id.ID
		folderID string
		depth    int
	}
	seen := map[id.ID]bool{}
	stack := []dir{{parent.Tree, parent.Cloud.RootID, 0}}
	var items []source.Item
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[d.tree] || d.depth >= tree.MaxDepth {
			return nil, fmt.Errorf("%w: a folder met twice or too deep", errNoSeed)
		}
		seen[d.tree] = true
		t, err := r.LoadTree(ctx, d.tree)
		if err != nil {
			return nil, err
		}
		for i := range t.Nodes {
			n := &t.Nodes[i]
			c := n.Cloud
			if c == nil || c.ID == "" {
				return nil, fmt.Errorf("%w: %s has no drive id", errNoSeed, n.Name)
			}
			name := c.Name
			if name == "" {
				name = n.Name
			}
			items = append(items, source.Item{ID: c.ID, ParentID: d.folderID, Name: name, Dir: n.Type == tree.TypeDir,
				MIME: c.MIME, Target: c.Target, Hash: c.Hash, Size: int64(n.Size), MTime: n.MTime})
			if n.Type == tree.TypeDir {
				stack = append(stack, dir{n.Subtree, c.ID, d.depth + 1})
			}
		}
	}
	return items, nil
}

// sameCloudContent says whether file n, whose drive gives a checksum,
// has the content of the parent's entry old: same checksum (and size,
// unless an exported document's, whose size is known only once
// downloaded).
func sameCloudContent(old, n *tree.Node) bool {
	if n.Cloud == nil || old.Cloud == nil || n.Cloud.Hash == "" || old.Type != tree.TypeFile {
		return false
	}
	return old.Cloud.Hash == n.Cloud.Hash && (old.Size == n.Size || exported(n))
}

// exported says whether n is a document exported by its drive (see
// tree.Cloud.Hash): no size is known before it is downloaded.
func exported(n *tree.Node) bool {
	return n.Cloud != nil && strings.HasPrefix(n.Cloud.Hash, "export:")
}

func warnf(opts Options, format string, args ...any) {
	if opts.Warnf != nil {
		opts.Warnf(format, args...)
	}
}
