package stats

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"

	"github.com/cloudstic/cloudstic/internal/engine/treewalk"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// Totals are the measures of a set of snapshots. Sizes are bytes.
type Totals struct {
	Snapshots int `json:"snapshots"`
	// RestoreFiles and RestoreSize count what restoring every snapshot
	// would write: each file once per snapshot (a hard-link group once).
	RestoreFiles int64 `json:"restore_files"`
	RestoreSize  int64 `json:"restore_size"`
	Dirs         int64 `json:"dirs"`
	Symlinks     int64 `json:"symlinks"`
	Others       int64 `json:"others"`
	// UniqueFiles and UniqueFilesSize count distinct file contents.
	UniqueFiles     int64 `json:"unique_files"`
	UniqueFilesSize int64 `json:"unique_files_size"`
	// DataBlobs and TreeBlobs are the distinct blobs the snapshots use;
	// StoredData and StoredTrees their stored (compressed, encrypted)
	// sizes. StoredSize is their sum: what the snapshots occupy.
	DataBlobs   int64 `json:"data_blobs"`
	TreeBlobs   int64 `json:"tree_blobs"`
	StoredData  int64 `json:"stored_data"`
	StoredTrees int64 `json:"stored_trees"`
	StoredSize  int64 `json:"stored_size"`
	// UniqueData is the plain size of the distinct data blobs, from the
	// plain sizes index files record. Blobs listed only by index files of
	// older versions have none: a file's new blobs are then given its size
	// in proportion to their stored sizes, which is exact for files of one
	// blob and for files whose blobs are all new or all already counted,
	// and an estimate otherwise (UniqueDataEstimated is then set).
	UniqueData          int64 `json:"unique_data"`
	UniqueDataEstimated bool  `json:"unique_data_estimated"`
	// FileBlobs is the number of blobs of all distinct file contents,
	// MaxFileBlobs that of the file with the most.
	FileBlobs    int64 `json:"file_blobs"`
	MaxFileBlobs int64 `json:"max_file_blobs"`
	// MissingBlobs counts blobs the trees name but the index does not
	// know (run check).
	MissingBlobs int64 `json:"missing_blobs"`
}

// DedupRatio is the restore size over the plain size of the distinct
// data: how many times over deduplication stores each byte.
func (t *Totals) DedupRatio() float64 { return ratio(t.RestoreSize, t.UniqueData) }

// CompressionRatio is the plain size of the distinct data over its stored
// size.
func (t *Totals) CompressionRatio() float64 { return ratio(t.UniqueData, t.StoredData) }

// SpaceRatio is the restore size over the stored size: both together.
func (t *Totals) SpaceRatio() float64 { return ratio(t.RestoreSize, t.StoredSize) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Counter accumulates Totals over snapshots; add snapshots in time order
// to see the growth (each Add returns the totals so far).
//
// It reads each tree once, however many snapshots and directories share
// it: the logical counts of a tree (files, sizes, directories) are
// computed from those of its subdirectories and remembered, and the
// distinct contents and blobs are sets. A snapshot whose trees are shared
// 2^40 ways costs as little to count as it takes to store.
type Counter struct {
	r       *repo.Repository
	m       *treewalk.Measurer
	t       Totals
	blobs   map[id.ID]bool    // data and tree blobs counted
	files   map[[32]byte]bool // distinct contents
	counted map[id.ID]*treeCount
	// indexErr is the first failure to read the index (its on-disk part
	// damaged and not rebuilt): the counts would take its blobs for
	// missing, so Add fails with it instead.
	indexErr error
	// ctx is Add's, for the index lookups of the Measurer's callbacks
	// (a rebuild of a damaged on-disk index runs under it).
	ctx context.Context
}

// treeCount is what restoring a tree writes below it, each entry once per
// path that reaches it, less the files of hard-link groups (counted once
// per snapshot, whichever trees hold them).
type treeCount struct {
	files, size, dirs, symlinks, others int64
	// linked are the hard-linked files directly in the tree; linkedDirs
	// the subdirectories with hard-linked files below them.
	linked     []linkedFile
	linkedDirs []id.ID
}

// linkedFile is a member of a hard-link group.
type linkedFile struct {
	key  [2]uint64 // device, inode
	size int64
}

// NewCounter returns an empty Counter over r, whose index must be loaded.
func NewCounter(r *repo.Repository) *Counter {
	c := &Counter{r: r, blobs: map[id.ID]bool{}, files: map[[32]byte]bool{}, counted: map[id.ID]*treeCount{}}
	c.m = treewalk.NewMeasurer(r)
	// Counting needs no expansion: no budget of entries, only the depth.
	c.m.Unlimited = true
	c.m.OnTree = c.countTree
	return c
}

// Totals returns what has been counted so far.
func (c *Counter) Totals() Totals { return c.t }

// Add counts one snapshot.
func (c *Counter) Add(ctx context.Context, s snapshot.WithID) error {
	c.ctx = ctx
	defer func() { c.ctx = nil }()
	c.blob(s.Tree, false)
	if _, err := c.m.Measure(ctx, s.Tree, ""); err != nil {
		return fmt.Errorf("snapshot %s: %w", s.ID.Short(), err)
	}
	if c.indexErr != nil {
		return fmt.Errorf("snapshot %s: %w", s.ID.Short(), c.indexErr)
	}
	root := c.counted[s.Tree]
	c.t.Snapshots++
	files, size := c.links(s.Tree)
	c.t.RestoreFiles = addSat(c.t.RestoreFiles, addSat(root.files, files))
	c.t.RestoreSize = addSat(c.t.RestoreSize, addSat(root.size, size))
	c.t.Dirs = addSat(c.t.Dirs, root.dirs)
	c.t.Symlinks = addSat(c.t.Symlinks, root.symlinks)
	c.t.Others = addSat(c.t.Others, root.others)
	return nil
}

// countTree counts a tree the Measurer read, after every tree below it:
// its logical counts from its entries and its subdirectories' counts, and
// its files' contents and blobs into the sets.
func (c *Counter) countTree(tid id.ID, t *tree.Tree) error {
	tc := &treeCount{}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		switch n.Type {
		case tree.TypeDir:
			c.blob(n.Subtree, false)
			sub := c.counted[n.Subtree]
			tc.dirs = addSat(tc.dirs, addSat(1, sub.dirs))
			tc.files, tc.size = addSat(tc.files, sub.files), addSat(tc.size, sub.size)
			tc.symlinks, tc.others = addSat(tc.symlinks, sub.symlinks), addSat(tc.others, sub.others)
			if (len(sub.linked) > 0 || len(sub.linkedDirs) > 0) && !slices.Contains(tc.linkedDirs, n.Subtree) {
				tc.linkedDirs = append(tc.linkedDirs, n.Subtree)
			}
		case tree.TypeSymlink:
			tc.symlinks++
		case tree.TypeFile:
			c.file(n)
			if n.Links > 1 && n.Inode != 0 {
				tc.linked = append(tc.linked, linkedFile{key: [2]uint64{n.Device, n.Inode}, size: int64(n.Size)})
				continue
			}
			tc.files++
			tc.size = addSat(tc.size, int64(n.Size))
		default:
			tc.others++
		}
	}
	c.counted[tid] = tc
	return c.indexErr
}

// links counts the hard-link groups below the tree root: each group's
// file once, whatever trees and paths hold its members.
func (c *Counter) links(root id.ID) (files, size int64) {
	groups := map[[2]uint64]bool{}
	seen := map[id.ID]bool{root: true}
	stack := []id.ID{root}
	for len(stack) > 0 {
		tc := c.counted[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, f := range tc.linked {
			if !groups[f.key] {
				groups[f.key] = true
				files, size = files+1, size+f.size
			}
		}
		for _, sub := range tc.linkedDirs {
			if !seen[sub] {
				seen[sub] = true
				stack = append(stack, sub)
			}
		}
	}
	return files, size
}

// addSat adds two counts, stopping at the largest int64: trees shared
// 2^64 ways would wrap around.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// file counts the contents of a regular file met in a tree read for the
// first time: distinct contents and their blobs.
func (c *Counter) file(n *tree.Node) {
	h := sha256.New()
	for _, b := range n.Content {
		h.Write(b[:])
	}
	var key [32]byte
	copy(key[:], h.Sum(nil))
	if c.files[key] {
		return
	}
	c.files[key] = true
	c.t.UniqueFiles++
	c.t.UniqueFilesSize += int64(n.Size)
	c.t.FileBlobs += int64(len(n.Content))
	c.t.MaxFileBlobs = max(c.t.MaxFileBlobs, int64(len(n.Content)))
	var all, fresh int64 // stored sizes of the file's blobs, and of those new to the count
	var freshPlain int64 // plain sizes of the new ones, when the index knows them all
	plainKnown := true
	for _, b := range n.Content {
		length, plain, isNew := c.blob(b, true)
		all += length
		if isNew {
			fresh += length
			freshPlain += plain
			plainKnown = plainKnown && plain > 0
		}
	}
	switch {
	case fresh == 0:
	case plainKnown:
		c.t.UniqueData += freshPlain
	case fresh == all:
		c.t.UniqueData += int64(n.Size)
	default:
		c.t.UniqueData += int64(float64(n.Size) * float64(fresh) / float64(all))
		c.t.UniqueDataEstimated = true
	}
}

// blob counts a blob the first time it is seen and returns its stored
// length, its plain length (0: unknown) and whether it was new.
func (c *Counter) blob(b id.ID, data bool) (length, plain int64, isNew bool) {
	loc, ok, err := c.r.Index().Find(c.ctx, b)
	if err != nil {
		c.indexErr = cmp.Or(c.indexErr, err)
		return 0, 0, false
	}
	if !ok {
		if !c.blobs[b] {
			c.blobs[b] = true
			c.t.MissingBlobs++
		}
		return 0, 0, false
	}
	length, plain = int64(loc.Length), int64(loc.Plain)
	if c.blobs[b] {
		return length, plain, false
	}
	c.blobs[b] = true
	c.t.StoredSize += length
	if data {
		c.t.DataBlobs++
		c.t.StoredData += length
	} else {
		c.t.TreeBlobs++
		c.t.StoredTrees += length
	}
	return length, plain, true
}
