// Command synthrepo fills an initialised local repository with a synthetic
// many-blob repository for the scale runs of check and prune
// (scripts/bench-index.sh): real index files, real pack headers and real
// tree blobs and snapshot, but data packs whose blob bytes are holes.
//
// Each data pack is a sparse file: the sum of its blob lengths of zeros,
// then a real sealed header naming blobs with random ids, then the
// trailer. Pack ids hash the header only, not the file. So `check` (which
// compares every pack's header with the index) and `prune` (which marks
// through real trees and deletes whole unused packs) run as on a real
// repository of that many blobs; `check -read-data`, restore or a repack
// would report the data as corrupt, which the scale runs avoid: the blobs
// no snapshot uses fill whole packs (deleted, never repacked).
//
// Usage: synthrepo -repo DIR -password PW -blobs N [-per-pack 100] [-per-file 10] [-unused 0.05]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/index"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/repo/snapshot"
	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// blobLength is each synthetic blob's sealed length (a typical chunk).
const blobLength = 160 << 10

// filesPerDir is how many file nodes one tree holds.
const filesPerDir = 1000

func main() {
	dir := flag.String("repo", "", "initialised local repository directory")
	password := flag.String("password", "", "repository password")
	blobs := flag.Int("blobs", 1_000_000, "data blobs to create")
	perPack := flag.Int("per-pack", 100, "data blobs per pack")
	perFile := flag.Int("per-file", 10, "blobs per file node")
	unused := flag.Float64("unused", 0.05, "fraction of the data packs no snapshot uses")
	flag.Parse()
	if err := run(context.Background(), *dir, *password, *blobs, *perPack, *perFile, *unused); err != nil {
		fmt.Fprintln(os.Stderr, "synthrepo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, password string, blobs, perPack, perFile int, unused float64) error {
	if dir == "" || blobs <= 0 || perPack <= 0 || perFile <= 0 || unused < 0 || unused > 1 {
		return fmt.Errorf("bad arguments (see -h)")
	}
	st := local.New(dir)
	r, err := repo.Open(ctx, st, repo.Credentials{Password: password})
	if err != nil {
		return err
	}
	// Writes need a writer, which only a lease gives: a shared lock, as a
	// backup takes.
	lease, err := lock.AcquireShared(ctx, st, "synthrepo", lock.Options{})
	if err != nil {
		return err
	}
	wr, err := r.Writer(lease)
	if err == nil {
		err = synthesize(ctx, wr, dir, blobs, perPack, perFile, unused)
	}
	return errors.Join(err, lease.Release(ctx))
}

// synthesize writes the packs, index files, trees and snapshot through r.
func synthesize(ctx context.Context, r *repo.Writer, dir string, blobs, perPack, perFile int, unused float64) error {
	rng := rand.New(rand.NewPCG(1, 2))
	packs := (blobs + perPack - 1) / perPack
	usedPacks := packs - int(float64(packs)*unused)
	var batch []index.PackBlobs
	w := &treeWriter{r: r, saver: r.NewSaver(ctx, 2, pack.Zstd), perFile: perFile}
	for p := 0; p < packs; p++ {
		n := min(perPack, blobs-p*perPack)
		pb, err := writePack(r.Repository, dir, rng, n)
		if err != nil {
			return err
		}
		batch = append(batch, pb)
		if len(batch) == 4096 || p == packs-1 {
			if _, err := r.WriteIndex(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
		if p < usedPacks {
			for _, e := range pb.Blobs {
				if err := w.addBlob(ctx, e.ID); err != nil {
					return err
				}
			}
		}
	}
	root, err := w.finish(ctx)
	if err != nil {
		return err
	}
	sid, err := r.SaveSnapshot(ctx, &snapshot.Snapshot{Time: time.Now(), Tree: root, Source: "local:/synthetic",
		Hostname: "synthrepo", Path: "/synthetic"})
	if err != nil {
		return err
	}
	fmt.Printf("%d blobs in %d packs (%d used), snapshot %s\n", blobs, packs, usedPacks, sid.Short())
	return nil
}

// writePack writes one sparse data pack of n random blob ids and returns
// its index entry.
func writePack(r *repo.Repository, dir string, rng *rand.Rand, n int) (index.PackBlobs, error) {
	entries := make([]pack.Entry, n)
	hdr := binary.LittleEndian.AppendUint32(nil, uint32(n))
	for i := range entries {
		e := &entries[i]
		for j := 0; j < len(e.ID); j += 8 {
			binary.LittleEndian.PutUint64(e.ID[j:], rng.Uint64())
		}
		e.Type, e.Offset, e.Length = pack.DataBlob, uint32(i*blobLength), blobLength
		// The header layout of pack.Builder.Finish: type, id, length.
		hdr = append(hdr, byte(e.Type))
		hdr = append(hdr, e.ID[:]...)
		hdr = binary.LittleEndian.AppendUint32(hdr, e.Length)
	}
	sealed, err := r.Key().Seal(nil, hdr)
	if err != nil {
		return index.PackBlobs{}, err
	}
	tail := binary.LittleEndian.AppendUint32(sealed, uint32(len(sealed)))
	pid := id.ID(sha256.Sum256(tail))
	path := filepath.Join(dir, filepath.FromSlash(repo.PackKey(pid)))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return index.PackBlobs{}, err
	}
	f, err := os.Create(path)
	if err != nil {
		return index.PackBlobs{}, err
	}
	if _, err := f.WriteAt(tail, int64(n)*blobLength); err != nil {
		_ = f.Close() // the write's error is the one to report
		return index.PackBlobs{}, err
	}
	return index.PackBlobs{ID: pid, Blobs: entries}, f.Close()
}

// treeWriter groups blob ids into file nodes, files into directories and
// directories under one root, saving each tree as it fills.
type treeWriter struct {
	r       *repo.Writer
	saver   *repo.Saver
	perFile int
	content []id.ID
	files   []tree.Node
	dirs    []tree.Node
}

func (w *treeWriter) addBlob(ctx context.Context, b id.ID) error {
	w.content = append(w.content, b)
	if len(w.content) < w.perFile {
		return nil
	}
	return w.endFile(ctx)
}

func (w *treeWriter) endFile(ctx context.Context) error {
	if len(w.content) == 0 {
		return nil
	}
	w.files = append(w.files, tree.Node{Name: fmt.Sprintf("f%07d", len(w.files)), Type: tree.TypeFile, Mode: 0o644,
		Size: uint64(len(w.content)) * blobLength, Content: w.content})
	w.content = nil
	if len(w.files) < filesPerDir {
		return nil
	}
	return w.endDir(ctx)
}

func (w *treeWriter) endDir(ctx context.Context) error {
	if len(w.files) == 0 {
		return nil
	}
	tid, err := w.save(ctx, w.files)
	if err != nil {
		return err
	}
	w.dirs = append(w.dirs, tree.Node{Name: fmt.Sprintf("d%07d", len(w.dirs)), Type: tree.TypeDir, Mode: 0o755, Subtree: tid})
	w.files = nil
	return nil
}

func (w *treeWriter) save(ctx context.Context, nodes []tree.Node) (id.ID, error) {
	data, err := tree.Encode(&tree.Tree{Nodes: nodes})
	if err != nil {
		return id.ID{}, err
	}
	tid := w.r.Key().ID(data)
	_, err = w.saver.Save(ctx, pack.TreeBlob, tid, data)
	return tid, err
}

func (w *treeWriter) finish(ctx context.Context) (id.ID, error) {
	if err := w.endFile(ctx); err != nil {
		return id.ID{}, err
	}
	if err := w.endDir(ctx); err != nil {
		return id.ID{}, err
	}
	root, err := w.save(ctx, w.dirs)
	if err != nil {
		return id.ID{}, err
	}
	return root, w.saver.Flush(ctx)
}
