package restore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/restore"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/id"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// BenchmarkRestoreMixed restores a small version of the benchmark's mixed
// set (bench/gen.py mixed): large random and compressible files, 1 MiB
// and 1 KiB files, from the local store. Profile it with
// go test -bench RestoreMixed -cpuprofile cpu.out ./internal/engine/restore/
func BenchmarkRestoreMixed(b *testing.B) {
	src := b.TempDir()
	words := strings.Repeat("2026-01-01T00:00:00 backup restore snapshot chunk pack index value=12345\n", 1<<20/72)
	total := 0
	for i := range 4 {
		checktest.WriteFile(b, src, fmt.Sprintf("random/r%d.bin", i), uint64(i+1), 16<<20)
		text := strings.Repeat(words+fmt.Sprint(i), 16)
		if err := os.MkdirAll(filepath.Join(src, "text"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "text", fmt.Sprintf("t%d.log", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		total += 16<<20 + len(text)
	}
	for i := range 16 {
		checktest.WriteFile(b, src, fmt.Sprintf("mb/m%02d.bin", i), uint64(100+i), 1<<20)
		total += 1 << 20
	}
	for i := range 64 {
		checktest.WriteFile(b, src, fmt.Sprintf("kb/k%03d.bin", i), uint64(200+i), 1<<10)
		total += 1 << 10
	}
	r, root, st := backupOf(b, src)
	b.SetBytes(int64(total))
	b.ResetTimer()
	restoreEach(b, r, checktest.Lease(b, st), root, restore.Options{}, nil)
}

// BenchmarkRestoreOneLargeFile restores a single 256 MiB file of random
// data: by one worker (as before files were split into segments) and by
// the default workers, a segment each.
func BenchmarkRestoreOneLargeFile(b *testing.B) {
	const size = 256 << 20
	src := b.TempDir()
	checktest.WriteFile(b, src, "disk.img", 1, size)
	r, root, st := backupOf(b, src)
	l := checktest.Lease(b, st)
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.SetBytes(size)
			restoreEach(b, r, l, root, restore.Options{Workers: workers}, nil)
		})
	}
}

// BenchmarkRestoreSmallFiles restores 20,000 files of 1-8 KiB in 100
// directories (the benchmark's small set, bench/gen.py small, at 20,000
// files) into a new output directory each time: the case where the cost
// per file is the directory operations, not the bytes.
func BenchmarkRestoreSmallFiles(b *testing.B) {
	src := b.TempDir()
	total := 0
	for i := range 20000 {
		size := 1024 + (i*7919)%(7*1024+1)
		checktest.WriteFile(b, src, fmt.Sprintf("d%d/s%d/f%04d.dat", i%10, i/10%10, i/100), uint64(i+1), size)
		total += size
	}
	r, root, st := backupOf(b, src)
	b.SetBytes(int64(total))
	b.ResetTimer()
	restoreEach(b, r, checktest.Lease(b, st), root, restore.Options{}, func(res *restore.Result) {
		if res.Files != 20000 {
			b.Fatalf("restored %d files, want 20000", res.Files)
		}
	})
}

// restoreEach restores root b.N times with opts, each time into a new
// output directory, removed outside the timer; check, when set, judges
// each result.
func restoreEach(b *testing.B, r *repo.Repository, l *lock.Lock, root id.ID, opts restore.Options, check func(*restore.Result)) {
	b.Helper()
	outs := b.TempDir()
	for i := range b.N {
		opts.Output = filepath.Join(outs, fmt.Sprint(i))
		res, err := restore.Run(context.Background(), r, l, root, opts)
		if err != nil {
			b.Fatal(err)
		}
		if check != nil {
			check(res)
		}
		b.StopTimer()
		if err := os.RemoveAll(opts.Output); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// backupOf backs src up into a new repository and returns it, its index
// loaded, with the snapshot's root tree and its store.
func backupOf(tb testing.TB, src string) (*repo.Repository, id.ID, store.Store) {
	tb.Helper()
	st := checktest.NewRepo(tb, tb.TempDir())
	sid := checktest.Backup(tb, st, src)
	r := checktest.Open(tb, st)
	ctx := context.Background()
	if _, err := r.LoadIndex(ctx); err != nil {
		tb.Fatal(err)
	}
	s, err := r.LoadSnapshot(ctx, sid)
	if err != nil {
		tb.Fatal(err)
	}
	return r, s.Tree, st
}
