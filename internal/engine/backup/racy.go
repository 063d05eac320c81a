package backup

import (
	"context"
	"io/fs"
	"time"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source"
)

// coarseMargin is the racy margin where a file system's timestamp
// granularity is not known: FAT keeps modification times in 2 s steps.
const coarseMargin = 2 * time.Second

// maxGranularitySamples bounds the root entries whose timestamps are
// looked at to tell the file system's granularity.
const maxGranularitySamples = 256

// An entry of the parent snapshot changed less than a margin before the
// parent backup began may have changed again after that backup read it
// without its timestamps moving, as file systems keep them in steps (the
// kernel's clock tick, a few milliseconds on Linux; 2 s on FAT). Such an
// entry is read again instead of trusted (git calls these entries racily
// clean). The margin is twice the step of the root's file system, found
// once per backup from the root's entries (see granularity); entries on
// other devices (file systems mounted below the root) and sources whose
// step cannot be told get coarseMargin.

// racyMargins sets w's thresholds for a parent backup that began at
// parentStart: rootDev is the device of the root, margin its file
// system's racy margin.
func (w *walker) racyMargins(parentStart time.Time, rootDev uint64, margin time.Duration) {
	w.rootDev = rootDev
	w.settledBefore = parentStart.Add(-margin).UnixNano()
	w.settledBeforeOther = parentStart.Add(-coarseMargin).UnixNano()
}

// settled reports whether old, an entry of the parent snapshot, had last
// changed safely before the parent backup began, so that equal timestamps
// now mean it has not changed since.
func (w *walker) settled(old *tree.Node) bool {
	before := w.settledBeforeOther
	if old.Device == w.rootDev {
		before = w.settledBefore
	}
	return old.MTime < before && old.CTime < before
}

// nodeSince captures path's node, reusing what the parent snapshot's entry
// prev (nil: none) recorded when prev was settled and is unchanged.
func (w *walker) nodeSince(path string, fi fs.FileInfo, prev *tree.Node) (tree.Node, error) {
	if prev != nil && !w.settled(prev) {
		prev = nil
	}
	return w.cap.NodeSince(w.ctx, path, fi, prev)
}

// racyMargin returns the racy margin of the file system of root: twice the
// larger of the source's declared step (the kernel tick) and the step its
// timestamps show. The step shown is the largest power of ten (1 ns to
// 1 s) dividing the sub-second part of every sampled modification time:
// never finer than the file system's real step, and coarser only when few
// entries happen to fall on round values, which errs on the safe side.
// Whole-second timestamps (FAT, HFS+, timestamps restored from archives)
// and a root without entries give coarseMargin.
func racyMargin(ctx context.Context, src source.Source, root source.Root) time.Duration {
	times := []time.Time{root.Info.ModTime()}
	if entries, err := src.ReadDir(ctx, root.Real); err == nil {
		for _, e := range entries[:min(len(entries), maxGranularitySamples)] {
			if fi, err := e.Info(); err == nil {
				times = append(times, fi.ModTime())
			}
		}
	}
	step := granularity(times)
	if step >= time.Second || len(times) < 2 {
		return coarseMargin
	}
	return 2 * max(step, src.TimeGranularity())
}

// granularity returns the largest power of ten, from 1 ns to 1 s, that
// divides the sub-second part of every time in times.
func granularity(times []time.Time) time.Duration {
	step := time.Second
	for step > time.Nanosecond {
		fits := true
		for _, t := range times {
			if t.Nanosecond()%int(step) != 0 {
				fits = false
				break
			}
		}
		if fits {
			return step
		}
		step /= 10
	}
	return time.Nanosecond
}
