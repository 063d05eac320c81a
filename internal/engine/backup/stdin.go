package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/chunker"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
)

// StdinSourcePrefix starts the Source of a snapshot of a stream: the rest
// is the stream's file name. With the host it picks the parent snapshot.
const StdinSourcePrefix = "stdin:"

// ErrStdinName means Stream.Filename cannot be a file name in a snapshot.
var ErrStdinName = errors.New("invalid stdin file name")

// Stream is a backup of one stream (standard input, or the output of a
// command) instead of a directory: the snapshot holds one file.
type Stream struct {
	// Reader is read to its end. A read error other than io.EOF fails the
	// backup, and no snapshot is written: a command's exit status reaches
	// the backup that way (see package source/cmdoutput).
	Reader io.Reader
	// Filename is the file's name in the snapshot: one path element.
	Filename string
}

// ValidStdinName checks that name can be the single file of a stdin
// snapshot: not empty, not . or .., no slash and no NUL.
func ValidStdinName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%w %q: want a single file name (no /)", ErrStdinName, name)
	}
	return nil
}

// runStream backs up opts.Stream. The stream is cut into chunks as it is
// read and new chunks are saved by opts.Workers goroutines, so memory is
// bounded by the chunker's buffer, the chunks being saved and the saver's
// packs, whatever the stream's length. The last packs and index file are
// left to s's flush, which saveSnapshot does.
func runStream(ctx context.Context, r *repo.Repository, s sink, snap *snapshot.Snapshot, res *Result, opts Options) error {
	st := opts.Stream
	var parentNode *tree.Node
	if res.Parent != nil {
		if t, err := r.LoadTree(ctx, res.Parent.Tree); err == nil && len(t.Nodes) == 1 && t.Nodes[0].Type == tree.TypeFile {
			parentNode = &t.Nodes[0]
		}
	}
	content, read, err := saveStream(ctx, r, s, st.Reader, opts)
	if err != nil {
		return interrupted(ctx, s, err)
	}
	node := streamNode(st.Filename, snap, read, content)
	sum := &snap.Summary
	switch {
	case parentNode == nil:
		sum.FilesNew = 1
	case parentNode.Name == node.Name && parentNode.Size == node.Size && slices.Equal(parentNode.Content, node.Content):
		// The parent's node, times included: an unchanged stream gives
		// the parent's tree (so -ignore-empty-snapshot can tell).
		node = *parentNode
		sum.FilesUnmodified = 1
	default:
		sum.FilesChanged = 1
	}
	data, err := tree.Encode(&tree.Tree{Nodes: []tree.Node{node}})
	if err != nil {
		return interrupted(ctx, s, err)
	}
	tid := r.Key().ID(data)
	if _, err := s.Save(ctx, pack.TreeBlob, tid, data); err != nil {
		return interrupted(ctx, s, err)
	}
	snap.Tree = tid
	stats := s.Stats()
	sum.FilesTotal, sum.BytesTotal, sum.BytesRead = 1, read, read
	sum.BlobsAdded, sum.BytesAdded = stats.BlobsAdded, stats.BytesAdded
	return nil
}

// streamNode is the snapshot's file: mode 0644, owned by the user running
// the backup, modified at the snapshot's time.
func streamNode(name string, snap *snapshot.Snapshot, size int64, content []id.ID) tree.Node {
	n := tree.Node{Name: name, Type: tree.TypeFile, Mode: 0o644, Size: uint64(size), MTime: snap.Time.UnixNano(),
		UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Content: content}
	if u, err := user.Current(); err == nil {
		n.User = u.Username
	}
	if g, err := user.LookupGroupId(strconv.Itoa(os.Getgid())); err == nil {
		n.Group = g.Name
	}
	return n
}

// saveStream chunks in and hands each new chunk, copied out of the
// chunker's buffer, to one of opts.Workers savers. It returns the chunk
// ids in order and the bytes read. The first error (a read error, a failed
// save, ctx cancelled) stops everything.
func saveStream(ctx context.Context, r *repo.Repository, s sink, in io.Reader, opts Options) ([]id.ID, int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cfg := r.Config().Chunker
	ch, err := chunker.New(in, chunker.NewGear(r.Key().ChunkerKey()), chunker.Params{Min: cfg.Min, Avg: cfg.Avg, Max: cfg.Max})
	if err != nil {
		return nil, 0, err
	}
	bufs := pack.NewBuffers(2 * opts.Workers)
	jobs := make(chan blobJob, opts.Workers)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if ctx.Err() == nil {
					if _, err := s.Save(ctx, pack.DataBlob, job.id, job.data); err != nil {
						cancel(fmt.Errorf("saving blob %s: %w", job.id.Short(), err))
					}
				}
				bufs.Put(job.data)
			}
		}()
	}
	content, read, err := chunkStream(ctx, r, s, ch, jobs, bufs, opts.Progress)
	close(jobs)
	wg.Wait()
	if err == nil {
		err = context.Cause(ctx)
	}
	return content, read, err
}

// chunkStream is saveStream's reading loop.
func chunkStream(ctx context.Context, r *repo.Repository, s sink, ch *chunker.Chunker, jobs chan<- blobJob, bufs *pack.Buffers, p *Progress) ([]id.ID, int64, error) {
	var content []id.ID
	var read int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, read, context.Cause(ctx)
		}
		chunk, err := ch.Next()
		if errors.Is(err, io.EOF) {
			return content, read, nil
		}
		if err != nil {
			return nil, read, fmt.Errorf("%w: reading the stream: %w", ErrSource, err)
		}
		read += int64(len(chunk))
		if p != nil {
			p.Bytes.Add(int64(len(chunk)))
		}
		bid := r.Key().ID(chunk)
		content = append(content, bid)
		if s.Known(bid) {
			continue
		}
		select {
		case jobs <- blobJob{id: bid, data: append(bufs.Get(len(chunk)), chunk...)}:
		case <-ctx.Done():
			return nil, read, context.Cause(ctx)
		}
	}
}

// runStreamSnapshot is Run for opts.Stream, from the snapshot's time on.
func runStreamSnapshot(ctx context.Context, r *repo.Repository, wr *repo.Writer, heads []snapshot.Head, opts Options, start, when time.Time) (*Result, error) {
	name := opts.Stream.Filename
	if err := ValidStdinName(name); err != nil {
		return nil, err
	}
	opts.fillDefaults()
	snap, err := newSnapshot(when, snapshot.Snapshot{Source: StdinSourcePrefix + name, Hostname: opts.Hostname, Tags: opts.Tags})
	if err != nil {
		return nil, err
	}
	res := &Result{Snapshot: snap}
	if _, err := res.setParent(ctx, r, heads); err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress.CurrentFile.Store(name)
	}
	in := &firstError{r: opts.Stream.Reader}
	opts.Stream = &Stream{Reader: in, Filename: name}
	s := newSink(ctx, r, wr, opts)
	if err := runStream(ctx, r, s, snap, res, opts); err != nil {
		if in.err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, in.err)
		}
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress.Files.Add(1)
	}
	return saveSnapshot(ctx, wr, s, snap, res, opts, start)
}

// firstError keeps the first read error other than io.EOF of r, which the
// chunker reports wrapped in its own words.
type firstError struct {
	r   io.Reader
	err error
}

func (f *firstError) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err != nil && !errors.Is(err, io.EOF) && f.err == nil {
		f.err = err
	}
	return n, err
}
