//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
)

// damageKinds are the stores the damage tests act on as an attacker who can
// write to the store but has no password: files planted in a local
// directory, objects put through the S3 API.
func damageKinds() []storeKind {
	return []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}}
}

// rawStore opens the store r's flags name directly, below cloudstic.
func rawStore(t *testing.T, r repoArgs) store.Store {
	t.Helper()
	flags := map[string]string{}
	for i := 0; i+1 < len(r); i += 2 {
		flags[r[i]] = r[i+1]
	}
	uri := flags["-store"]
	if path, ok := strings.CutPrefix(uri, "local:"); ok {
		return local.New(path)
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(uri, "s3:"), "/")
	st, err := s3.Open(context.Background(), s3.Config{Bucket: bucket, Prefix: prefix, Endpoint: flags["-s3-endpoint"],
		Region: flags["-s3-region"], AccessKey: flags["-s3-access-key"], SecretKey: flags["-s3-secret-key"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// putJunk stores random bytes under prefix, named by their SHA-256 as
// sealed objects are, and returns the key.
func putJunk(t *testing.T, st store.Store, prefix string) string {
	t.Helper()
	b := make([]byte, 500)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	key := prefix + fmt.Sprintf("%x", sha256.Sum256(b))
	if _, err := st.Put(context.Background(), key, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return key
}

// flipObject inverts one byte in the middle of the object key (a snapshot
// or an index file).
func flipObject(t *testing.T, st store.Store, key string) {
	t.Helper()
	ctx := context.Background()
	data, err := st.Get(ctx, key, repo.MaxMetadataSize)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if _, err := st.Put(ctx, key, data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// keys lists the keys under prefix, sorted.
func keys(t *testing.T, st store.Store, prefix string) []string {
	t.Helper()
	var out []string
	err := st.List(context.Background(), prefix, func(oi store.ObjectInfo) error {
		out = append(out, oi.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// warnsOnce checks that a run exited 0 with one line on stderr naming key.
func warnsOnce(t *testing.T, res result, key string) {
	t.Helper()
	wantCode(t, res, 0)
	if n := strings.Count(res.stderr, key); n != 1 || !strings.Contains(res.stderr, "warning: "+key) {
		t.Errorf("stderr names %s %d times, want one warning: %v", key, n, res)
	}
}

// TestJunkSnapshotSkipped puts a junk object at snapshots/<its SHA-256>:
// list, backup, restore and forget skip it with one warning each and exit
// 0, and a retention policy does not delete it.
func TestJunkSnapshotSkipped(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "src")
	makeTree(t, src, treeOpts{seed: 7})
	for _, kind := range damageKinds() {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, kind)
			mustRun(t, r.with("backup", "-source", "local:"+src)...)
			st := rawStore(t, r)
			junk := putJunk(t, st, "snapshots/")
			warnsOnce(t, run(t, r.with("list")...), junk)
			warnsOnce(t, run(t, r.with("backup", "-source", "local:"+src)...), junk)
			dst := filepath.Join(t.TempDir(), "out")
			warnsOnce(t, run(t, r.with("restore", "latest", "-output", dst)...), junk)
			compareTrees(t, src, dst, cmpOpts{})
			warnsOnce(t, run(t, r.with("forget", "-keep-last", "1")...), junk)
			if _, err := st.Stat(context.Background(), junk); err != nil {
				t.Errorf("forget -keep-last 1 deleted the damaged snapshot: %v", err)
			}
			if n := len(listJSON(t, r)); n != 1 {
				t.Errorf("%d snapshots after forget -keep-last 1, want 1", n)
			}
		})
	}
}

// TestRepairRecoversRepository is issue 36's "done when": a repository
// with one corrupt index file and one junk snapshot is brought back by
// repair index and repair snapshots to check -read-data clean, and every
// good snapshot restores byte for byte. The metadata cache is off, so that
// the store's damaged copies are what every command reads.
func TestRepairRecoversRepository(t *testing.T) {
	t.Parallel()
	var srcs []string
	for i := range 3 {
		src := filepath.Join(t.TempDir(), "src")
		makeTree(t, src, treeOpts{seed: uint64(20 + i)})
		srcs = append(srcs, src)
	}
	for _, kind := range damageKinds() {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			base := newRepo(t, kind)
			st := rawStore(t, base)
			r := append(slices.Clone(base), "-no-cache")
			var ids []string
			for _, src := range srcs {
				ids = append(ids, backupJSON(t, r, src).SnapshotID)
			}
			index := keys(t, st, "index/packs/")
			if len(index) < 3 {
				t.Fatalf("index files %v, want one per backup", index)
			}
			flipObject(t, st, index[1])
			junk := putJunk(t, st, "snapshots/")

			res := run(t, r.with("check")...)
			if res.code != 1 || !strings.Contains(res.stderr, index[1]) || !strings.Contains(res.stderr, junk) {
				t.Fatalf("check does not name the damage: %v", res)
			}
			wantCode(t, run(t, r.with("prune")...), 1)
			mustRun(t, r.with("repair", "index")...)
			mustRun(t, r.with("repair", "snapshots")...)

			res = mustRun(t, r.with("check", "-read-data")...)
			if !strings.Contains(res.stderr, "No errors found") || strings.Contains(withoutPasswordWarning(res.stderr), "warning:") {
				t.Fatalf("check after the repairs: %v", res)
			}
			if n := len(listJSON(t, r)); n != len(srcs) {
				t.Errorf("%d snapshots after the repairs, want %d", n, len(srcs))
			}
			for i, sid := range ids {
				dst := filepath.Join(t.TempDir(), "out")
				res := mustRun(t, r.with("restore", sid, "-output", dst)...)
				if strings.Contains(withoutPasswordWarning(res.stderr), "warning:") {
					t.Errorf("restore %s warns: %v", sid[:8], res)
				}
				compareTrees(t, srcs[i], dst, cmpOpts{})
			}
		})
	}
}
