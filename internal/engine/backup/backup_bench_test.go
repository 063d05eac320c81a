package backup

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store/local"
)

// BenchmarkBackup backs up a generated tree into a local repository: run
// with -cpuprofile / -memprofile to see where a backup spends its time
// (docs/performance.md). The "large" set is 64 MiB of random and
// compressible files, "small" 2,000 files of 4 KiB.
func BenchmarkBackup(b *testing.B) {
	sets := []struct {
		name  string
		files int
		size  int
	}{{"large", 8, 8 << 20}, {"small", 2000, 4 << 10}}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			src := b.TempDir()
			for i := 0; i < set.files; i++ {
				data := make([]byte, set.size)
				if i%2 == 0 {
					if _, err := rand.Read(data); err != nil {
						b.Fatal(err)
					}
				} else {
					for j := range data {
						data[j] = "backup restore snapshot\n"[j%24]
					}
					data[0] = byte(i)
				}
				dir := filepath.Join(src, fmt.Sprintf("d%02d", i%20))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(set.files * set.size))
			ctx := context.Background()
			for b.Loop() {
				st := local.New(b.TempDir())
				r, _, err := repo.Init(ctx, st, repo.InitOptions{Credentials: repo.Credentials{
					PlatformKey: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}})
				if err != nil {
					b.Fatal(err)
				}
				l, err := lock.AcquireShared(ctx, st, "backup", lock.Options{})
				if err != nil {
					b.Fatal(err)
				}
				w, err := r.Writer(l)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(ctx, w, nil, Options{Path: src, Hostname: "bench"}); err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
