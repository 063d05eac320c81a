package operation_test

import (
	"fmt"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// BenchmarkBackupManySnapshots backs up a small directory as a second host
// would, in a repository of 1 or 10,000 snapshots (copies of one backup's
// snapshot from other hosts and sources, see addSnapshots): on the local
// store and on the S3 test server, with a fresh cache each time (a new
// host) and with a warm one (the same host again), and on the local store
// also without a cache (-no-cache; the local store's cache holds only the
// snapshot heads file). It
// reports the GETs of snapshot objects, all requests and allocations per
// backup, opening the repository included. Run it with -benchtime 1x or
// 3x: building the 10,000-snapshot repository takes seconds per store.
func BenchmarkBackupManySnapshots(b *testing.B) {
	stores := []struct {
		name    string
		options func(testing.TB) operation.Options
		local   bool
	}{
		{"local", func(tb testing.TB) operation.Options { return options(tb.TempDir()) }, true},
		{"s3", func(tb testing.TB) operation.Options { return s3Options(tb, s3test.Named(tb, "versitygw")) }, false},
	}
	for _, st := range stores {
		for _, n := range []int{1, 10_000} {
			b.Run(fmt.Sprintf("%s/snapshots=%d", st.name, n), func(b *testing.B) {
				o := st.options(b)
				initRepo(b, o)
				src := b.TempDir()
				for i := range 10 {
					checktest.WriteFile(b, src, fmt.Sprintf("f%d", i), uint64(i), 10<<10)
				}
				backupCounted(b, o, "", backup.Options{Path: src, Hostname: "first"})
				if n > 1 {
					addSnapshots(b, o, n)
				}
				opts := backup.Options{Path: src, Hostname: "second"}
				if st.local {
					b.Run("no-cache", func(b *testing.B) { benchBackups(b, o, func() string { return "" }, opts) })
				}
				b.Run("fresh-cache", func(b *testing.B) { benchBackups(b, o, b.TempDir, opts) })
				warm := b.TempDir()
				backupCounted(b, o, warm, opts)
				b.Run("warm-cache", func(b *testing.B) { benchBackups(b, o, func() string { return warm }, opts) })
			})
		}
	}
}

// benchBackups runs b.N backups, each with the cache directory cacheDir
// returns, and reports their requests.
func benchBackups(b *testing.B, o operation.Options, cacheDir func() string, opts backup.Options) {
	b.ReportAllocs()
	var snapGets, gets, lists, total int64
	for range b.N {
		dir := cacheDir()
		kinds, n := backupCounted(b, o, dir, opts)
		for kind, c := range kinds.n {
			switch kind[:4] {
			case "GET ":
				gets += c
			case "LIST":
				lists += c
			}
		}
		snapGets += kinds.get(snapshotGets)
		total += n
	}
	per := func(v int64) float64 { return float64(v) / float64(b.N) }
	b.ReportMetric(per(snapGets), "snapshot-GETs/op")
	b.ReportMetric(per(gets), "GETs/op")
	b.ReportMetric(per(lists), "LISTs/op")
	b.ReportMetric(per(total), "requests/op")
}
