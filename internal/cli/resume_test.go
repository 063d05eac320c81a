package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
	"github.com/cloudstic/cloudstic/internal/store"
)

// packPuts counts the packs (keys under data/) stored through it, and
// cancels the command's context once stopAfter are stored: Ctrl-C in the
// middle of a backup, at a known point.
type packPuts struct {
	mu        sync.Mutex
	n         int
	bytes     int64
	stopAfter int // 0: never
	cancel    context.CancelFunc
}

// wrap is the command's IO.TestStoreWrapper.
func (p *packPuts) wrap(st store.Store) store.Store { return &countingStore{Store: st, p: p} }

type countingStore struct {
	store.Store
	p *packPuts
}

func (s *countingStore) Put(ctx context.Context, key string, data []byte, opts store.PutOptions) (store.ObjectInfo, error) {
	info, err := s.Store.Put(ctx, key, data, opts)
	if err == nil && strings.HasPrefix(key, "data/") {
		p := s.p
		p.mu.Lock()
		p.n++
		p.bytes += int64(len(data))
		if p.n == p.stopAfter {
			p.cancel()
		}
		p.mu.Unlock()
	}
	return info, err
}

// runCounted runs cli.Main with env, counting the packs it stores and
// interrupting it after stopAfter of them (0: never).
func runCounted(t *testing.T, env map[string]string, stopAfter int, args ...string) (outcome, *packPuts) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &packPuts{stopAfter: stopAfter, cancel: cancel}
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, args, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] }, TestStoreWrapper: p.wrap})
	return outcome{stdout.String(), stderr.String(), code}, p
}

// TestBackupResumesAfterInterrupt interrupts a backup of 80 MiB of
// incompressible data (5 packs of 16 MiB) once 2 packs are stored, as
// Ctrl-C does (the command's context is cancelled): it exits 130 after a
// clean stop, with its lock released and its stored packs indexed. The
// re-run uploads only what was missing (the two runs' packs add up to the
// source, within 5 %), and the repository checks clean with -read-data.
func TestBackupResumesAfterInterrupt(t *testing.T) {
	t.Parallel()
	const files, size, stopAfter = 5, 16 << 20, 2
	dir := t.TempDir()
	env := map[string]string{"CLOUDSTIC_STORE": "local:" + filepath.Join(dir, "repo"), "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{1})
	for i := range files {
		data := make([]byte, size)
		_, _ = rng.Read(data) // ChaCha8's Read never fails
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, nil)

	first, p1 := runCounted(t, env, stopAfter, "backup", "-quiet", "-source", "local:"+src)
	first.check(t, cli.ExitInterrupted, nil, []string{"interrupted; the lock was released"})
	var locks []any
	if o := mainWith(t, env, "locks", "-json"); json.Unmarshal([]byte(o.stdout), &locks) != nil || len(locks) != 0 {
		t.Fatalf("locks after the interruption: %v", o)
	}

	second, p2 := runCounted(t, env, 0, "backup", "-quiet", "-source", "local:"+src)
	second.check(t, cli.ExitOK, nil, nil)
	total := int64(files * size)
	t.Logf("interrupted run stored %d packs (%d bytes); the re-run %d (%d bytes) of a %d-byte source", p1.n, p1.bytes, p2.n, p2.bytes, total)
	// Packs hold 8 to 16 MiB (a pack ends before the chunk that would
	// overfill it): had the re-run stored the first run's packs again,
	// the sum would exceed the source by at least 16 MiB.
	if p1.n < stopAfter || p1.bytes+p2.bytes > total*21/20 {
		t.Errorf("the re-run stored %d bytes after %d were stored, of a %d-byte source: want only what was missing", p2.bytes, p1.bytes, total)
	}
	mainWith(t, env, "check", "-read-data").check(t, cli.ExitOK, nil, nil)
}
