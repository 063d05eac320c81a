package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo/id"
)

// damagedDisk is a damage done to an on-disk index file past what
// OpenDisk checks, to the file at path or, after it was opened, through
// the open file (truncate).
type damagedDisk struct {
	name string
	// packs: the damage is to the pack table, which FindAll does not
	// read.
	packs bool
	// before damages the file's bytes before it is opened.
	before func(data []byte, l diskLayout)
	// after damages the file once it is open (0: not at all).
	truncateAfter func(l diskLayout) int64
}

// diskDamages are the damages every reader must report as such, never
// as blobs the file does not hold.
var diskDamages = []damagedDisk{
	{name: "record block byte flipped", before: func(data []byte, _ diskLayout) { data[3*blockSize+100] ^= 0x10 }},
	{name: "record block checksum", before: func(data []byte, _ diskLayout) { data[3*blockSize+crcOffset] ^= 1 }},
	{name: "pack block byte flipped", packs: true, before: func(data []byte, l diskLayout) { data[l.packsOff+40] ^= 1 }},
	{name: "record block replaced by another sealed one", before: func(data []byte, _ diskLayout) {
		// Authentic (the seal does not bind a block's place): only the
		// first ids tell that it is not block 3.
		copy(data[3*blockSize:4*blockSize], data[1*blockSize:2*blockSize])
	}},
	{name: "truncated at a block after opening", truncateAfter: func(l diskLayout) int64 {
		return blockSize * int64(1+l.recordBlocks/2)
	}},
}

// openDamaged writes d's file damaged by dd into dir and opens it.
func openDamaged(t *testing.T, d *Disk, dd damagedDisk) *Disk {
	t.Helper()
	data, err := os.ReadFile(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if dd.before != nil {
		dd.before(data, d.l)
	}
	p := filepath.Join(t.TempDir(), "damaged"+DiskSuffix)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bd, err := OpenDisk(p, d.sealer)
	if err != nil {
		t.Fatalf("opening the damaged file: %v (the damage must be past OpenDisk's checks)", err)
	}
	t.Cleanup(func() { _ = bd.Close() }) // read-only; closed again by some tests
	if dd.truncateAfter != nil {
		if err := os.Truncate(p, dd.truncateAfter(d.l)); err != nil {
			t.Fatal(err)
		}
	}
	return bd
}

// rebuildFixture is an on-disk index of 1,500 blobs (18 record blocks)
// sealed with k, and the blobs it holds, sorted.
func rebuildFixture(t *testing.T, k Sealer) (*Disk, []PackBlobs, map[id.ID]Location, []id.ID) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 9))
	packs := randomPacks(rng, 150, 10, 0, false)
	files, ordered := splitFiles(rng, packs, 3)
	d := buildDisk(t, t.TempDir(), k, 1000, nil, files)
	ref := reference(ordered)
	blobs := make([]id.ID, 0, len(ref))
	for b := range ref {
		blobs = append(blobs, b)
	}
	slices.SortFunc(blobs, compareIDs) // each lookup's goroutine reads blocks in order
	return d, ordered, ref, blobs
}

// TestFindAllDamage: FindAll over a damaged file fails with
// ErrDiskCorrupt, never answers "not found" for a blob of a damaged
// block. The old reader did for a block replaced by another sealed block,
// and for a block truncated away (the rest of its buffer held the block
// read before). Each call looks up a window of the sorted blobs, small
// enough for one goroutine, so that a window starting in good blocks
// goes on into damaged ones.
func TestFindAllDamage(t *testing.T) {
	sealers := []struct {
		name string
		k    Sealer
	}{{"sealed", testKey(t)}, {"unsealed (a scratch index)", Unsealed{}}}
	for _, sl := range sealers {
		d, _, _, blobs := rebuildFixture(t, sl.k)
		for _, dd := range diskDamages {
			if dd.packs {
				continue
			}
			t.Run(sl.name+"/"+dd.name, func(t *testing.T) {
				findAllWindows(t, openDamaged(t, d, dd), blobs)
			})
		}
	}
}

// findAllWindows looks blobs up with FindAll, by windows, and checks that
// it fails on the damage and never answers "not found" without an error.
func findAllWindows(t *testing.T, bd *Disk, blobs []id.ID) {
	t.Helper()
	failed := false
	for lo := 0; lo < len(blobs); lo += 100 {
		window := blobs[lo:min(lo+200, len(blobs))]
		found, err := bd.FindAll(window)
		if err != nil {
			if !errors.Is(err, ErrDiskCorrupt) {
				t.Fatalf("FindAll: %v, want ErrDiskCorrupt", err)
			}
			failed = true
			continue
		}
		for i, f := range found {
			if !f.OK {
				t.Fatalf("FindAll: blob %s (#%d) not found, and no error", window[i].Short(), lo+i)
			}
		}
	}
	if !failed {
		t.Fatal("FindAll never met the damage")
	}
}

// TestIndexRebuildsDamagedBase: lookups that meet a damaged on-disk part
// rebuild it once, however many run at once, and then find every blob;
// a rebuild that fails is an error of every lookup that needs the part,
// naming the file, never "unknown" passed off as an answer.
func TestIndexRebuildsDamagedBase(t *testing.T) {
	d, ordered, ref, blobs := rebuildFixture(t, testKey(t))
	good := func(context.Context, *Disk, func(PackBlobs)) (*Disk, error) { return OpenDisk(d.Path(), d.sealer) }
	intoMemory := func(_ context.Context, _ *Disk, add func(PackBlobs)) (*Disk, error) {
		var wg sync.WaitGroup
		for _, p := range ordered {
			wg.Go(func() { add(p) }) // add must take several goroutines
		}
		wg.Wait()
		return nil, nil
	}
	errStore := errors.New("store unreachable")
	failing := func(context.Context, *Disk, func(PackBlobs)) (*Disk, error) { return nil, errStore }
	tests := []struct {
		name    string
		rebuild Rebuild
		wantErr error // of every lookup of the part, nil: all found
		onDisk  bool  // the index keeps an on-disk part
	}{
		{"rebuilt on disk", good, nil, true},
		{"rebuilt into memory", intoMemory, nil, false},
		{"rebuild fails", failing, errStore, false},
	}
	for _, tt := range tests {
		for _, dd := range diskDamages {
			t.Run(tt.name+"/"+dd.name, func(t *testing.T) {
				bd := openDamaged(t, d, dd)
				var calls atomic.Int32
				x := New()
				x.SetRebuildableBase(bd, func(ctx context.Context, damaged *Disk, add func(PackBlobs)) (*Disk, error) {
					calls.Add(1)
					if damaged != bd {
						t.Errorf("rebuild of %v, want the damaged part", damaged)
					}
					nd, err := tt.rebuild(ctx, damaged, add)
					if nd != nil {
						t.Cleanup(func() { _ = nd.Close() }) // read-only
					}
					return nd, err
				})
				if tt.wantErr != nil {
					// Lookups before the failure answer from the
					// blocks they read: from it on, none does.
					failed := slices.ContainsFunc(blobs, func(b id.ID) bool {
						_, _, err := x.Find(t.Context(), b)
						return err != nil
					})
					if !failed {
						t.Fatal("no lookup met the damage")
					}
				}
				lookUpAll(t, x, ref, blobs, bd.Path(), tt.wantErr)
				if n := calls.Load(); n != 1 {
					t.Fatalf("%d rebuilds, want 1", n)
				}
				if (x.Base() != nil) != tt.onDisk {
					t.Fatalf("on-disk part %v, want one: %v", x.Base(), tt.onDisk)
				}
				if !errors.Is(x.Err(), tt.wantErr) || (tt.wantErr == nil) != (x.Err() == nil) {
					t.Fatalf("Err: %v, want %v", x.Err(), tt.wantErr)
				}
				checkPackReads(t, x, ordered, bd.Path(), tt.wantErr)
			})
		}
	}
}

// lookUpAll looks every blob up from several goroutines at once, through
// Find, Lookup, Contains and Has, and checks the answers: every blob
// found, or, with wantErr, Find and Contains failing with it and with
// ErrDiskCorrupt, naming path.
func lookUpAll(t *testing.T, x *Index, ref map[id.ID]Location, blobs []id.ID, path string, wantErr error) {
	t.Helper()
	var wg sync.WaitGroup
	var errs atomic.Int32
	for g := range 6 {
		wg.Go(func() {
			for i := g; i < len(blobs); i += 3 { // two goroutines per blob
				b := blobs[i]
				loc, ok, err := x.Find(t.Context(), b)
				has, cerr := x.Contains(t.Context(), b)
				switch {
				case wantErr == nil && (err != nil || !ok || loc != ref[b] || !has || cerr != nil):
					t.Errorf("Find(%s) = %+v, %v, %v; Contains %v, %v; want %+v", b.Short(), loc, ok, err, has, cerr, ref[b])
				case wantErr == nil && !x.Has(t.Context(), b):
					t.Errorf("Has(%s) = false", b.Short())
				case wantErr != nil && (!errors.Is(err, wantErr) || !errors.Is(err, ErrDiskCorrupt) ||
					!strings.Contains(err.Error(), path) || ok || !errors.Is(cerr, wantErr)):
					t.Errorf("Find(%s) = %v, %v; Contains %v; want %v naming %s", b.Short(), ok, err, cerr, wantErr, path)
				case wantErr != nil && x.Has(t.Context(), b):
					t.Errorf("Has(%s) = true after a failed rebuild", b.Short())
				}
				if t.Failed() {
					errs.Add(1)
					return
				}
			}
		})
	}
	wg.Wait()
	if errs.Load() > 0 {
		t.FailNow()
	}
}

// checkPackReads checks Packs, HasPack and Each after lookUpAll: every
// pack and blob, or, with wantErr, each failing with it and with
// ErrDiskCorrupt, naming path, rather than answering from memory alone.
func checkPackReads(t *testing.T, x *Index, ordered []PackBlobs, path string, wantErr error) {
	t.Helper()
	packs, perr := x.Packs(t.Context())
	has, herr := x.HasPack(t.Context(), ordered[0].ID)
	n := 0
	eerr := x.Each(func(id.ID, Location) { n++ })
	if wantErr == nil {
		if perr != nil || herr != nil || eerr != nil || len(packs) != len(ordered) || !has || n != x.Len() {
			t.Fatalf("Packs %d of %d (%v), HasPack %v (%v), Each %d of %d (%v)",
				len(packs), len(ordered), perr, has, herr, n, x.Len(), eerr)
		}
		return
	}
	for what, err := range map[string]error{"Packs": perr, "HasPack": herr, "Each": eerr} {
		if !errors.Is(err, wantErr) || !errors.Is(err, ErrDiskCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want %v naming %s", what, err, wantErr, path)
		}
	}
	if packs != nil || has {
		t.Fatalf("Packs %d, HasPack %v beside their errors", len(packs), has)
	}
}

// TestIndexRebuildStopped: a rebuild that stops because the ctx of the
// lookup that started it ended is no failure: that lookup returns the
// ctx's error, Err stays nil, a lookup under an ended ctx starts no
// rebuild and answers "cannot tell" (never "absent"), and the next lookup
// with a live ctx rebuilds the part and finds every blob.
func TestIndexRebuildStopped(t *testing.T) {
	d, _, ref, blobs := rebuildFixture(t, testKey(t))
	for _, stopErr := range []error{context.Canceled, errors.New("request cut short")} {
		t.Run(stopErr.Error(), func(t *testing.T) {
			bd := openDamaged(t, d, diskDamages[0])
			var calls atomic.Int32
			started := make(chan struct{})
			x := New()
			x.SetRebuildableBase(bd, func(ctx context.Context, _ *Disk, _ func(PackBlobs)) (*Disk, error) {
				if calls.Add(1) == 1 {
					close(started)
					<-ctx.Done()
					return nil, stopErr // whatever the error, ctx ended
				}
				nd, err := OpenDisk(d.Path(), d.sealer)
				if nd != nil {
					t.Cleanup(func() { _ = nd.Close() }) // read-only
				}
				return nd, err
			})
			ctx, cancel := context.WithCancel(t.Context())
			stopped := make(chan error, 1)
			go func() {
				for _, b := range blobs {
					if _, _, err := x.Find(ctx, b); err != nil {
						stopped <- err
						return
					}
				}
				stopped <- nil
			}()
			<-started
			cancel()
			if err := <-stopped; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), bd.Path()) {
				t.Fatalf("stopped lookup: %v; want context.Canceled naming %s", err, bd.Path())
			}
			if x.Err() != nil {
				t.Fatalf("Err after a stopped rebuild: %v", x.Err())
			}
			for _, b := range blobs {
				if _, ok, err := x.Find(ctx, b); ok || !errors.Is(err, context.Canceled) {
					t.Fatalf("Find(%s) under an ended ctx: %v, %v", b.Short(), ok, err)
				}
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("%d rebuilds under an ended ctx, want none", n-1)
			}
			lookUpAll(t, x, ref, blobs, bd.Path(), nil)
			if n := calls.Load(); n != 2 || x.Base() == nil {
				t.Fatalf("%d rebuilds, on-disk part %v; want 2 and one", n, x.Base())
			}
		})
	}
}
