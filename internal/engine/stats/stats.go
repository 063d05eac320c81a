package stats

import (
	"context"
	"crypto/sha256"
	"fmt"

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
type Counter struct {
	r     *repo.Repository
	t     Totals
	blobs map[id.ID]bool    // data and tree blobs counted
	files map[[32]byte]bool // distinct contents
}

// NewCounter returns an empty Counter over r, whose index must be loaded.
func NewCounter(r *repo.Repository) *Counter {
	return &Counter{r: r, blobs: map[id.ID]bool{}, files: map[[32]byte]bool{}}
}

// Totals returns what has been counted so far.
func (c *Counter) Totals() Totals { return c.t }

// Add counts one snapshot.
func (c *Counter) Add(ctx context.Context, s snapshot.WithID) error {
	c.t.Snapshots++
	c.blob(s.Tree, false)
	links := map[[2]uint64]bool{}
	err := treewalk.Walk(ctx, c.r, s.Tree, "", func(_ string, n *tree.Node) error {
		switch n.Type {
		case tree.TypeDir:
			c.t.Dirs++
			c.blob(n.Subtree, false)
		case tree.TypeSymlink:
			c.t.Symlinks++
		case tree.TypeFile:
			if n.Links > 1 && n.Inode != 0 {
				key := [2]uint64{n.Device, n.Inode}
				if links[key] {
					return nil
				}
				links[key] = true
			}
			c.file(n)
		default:
			c.t.Others++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", s.ID.Short(), err)
	}
	return nil
}

// file counts one regular file of a snapshot.
func (c *Counter) file(n *tree.Node) {
	c.t.RestoreFiles++
	c.t.RestoreSize += int64(n.Size)
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
	loc, ok := c.r.Index().Lookup(b)
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
