package check_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/engine/check"
	"github.com/cloudstic/cloudstic/internal/engine/check/checktest"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/pack"
	"github.com/cloudstic/cloudstic/internal/store"
)

// firstPack returns the store key of the pack with the smallest id.
func firstPack(t *testing.T, st store.Store) string {
	t.Helper()
	objs, _, err := checktest.Open(t, st).ListObjects(context.Background(), repo.DataPrefix)
	if err != nil || len(objs) == 0 {
		t.Fatalf("listing packs: %d, %v", len(objs), err)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	return objs[0].Key
}

// dropIndexEntry rewrites the index without one data blob entry.
func dropIndexEntry(t *testing.T, st store.Store) string {
	t.Helper()
	r := checktest.Open(t, st)
	packs, files := checktest.Listings(t, r)
	dropped := ""
	for i := range packs {
		for j, e := range packs[i].Blobs {
			if e.Type == pack.DataBlob && dropped == "" {
				dropped = e.ID.Short()
				packs[i].Blobs = append(packs[i].Blobs[:j:j], packs[i].Blobs[j+1:]...)
				break
			}
		}
	}
	checktest.ReplaceIndex(t, st, r, files, packs)
	return dropped
}

// leftoverPack stores a pack no index names, as an interrupted backup does.
func leftoverPack(t *testing.T, st store.Store) string {
	t.Helper()
	r := checktest.Open(t, st)
	data := []byte("a blob of an interrupted backup")
	sealed, err := r.Codec().Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	b := pack.NewBuilder(1024)
	b.Add(pack.DataBlob, r.Key().ID(data), sealed, len(data))
	out, pid, _, err := b.Finish(r.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), repo.PackKey(pid), out, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return repo.PackKey(pid)
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		readData bool
		damage   func(t *testing.T, dir string, st store.Store) (kind, key string)
		note     bool // expect a note about the damage instead of an error
	}{
		{name: "healthy", readData: true},
		{name: "flipped byte", readData: true, damage: func(t *testing.T, dir string, st store.Store) (string, string) {
			key := firstPack(t, st)
			p := filepath.Join(dir, filepath.FromSlash(key))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/3] ^= 0x01
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return check.KindCorrupt, key
		}},
		{name: "truncated pack", damage: func(t *testing.T, dir string, st store.Store) (string, string) {
			key := firstPack(t, st)
			p := filepath.Join(dir, filepath.FromSlash(key))
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, fi.Size()-100); err != nil {
				t.Fatal(err)
			}
			return check.KindCorrupt, key
		}},
		{name: "deleted pack", damage: func(t *testing.T, dir string, st store.Store) (string, string) {
			key := firstPack(t, st)
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
				t.Fatal(err)
			}
			return check.KindMissing, key
		}},
		{name: "missing index entry", damage: func(t *testing.T, dir string, st store.Store) (string, string) {
			dropIndexEntry(t, st)
			return check.KindMissing, "snapshots/" // the snapshot that references the blob
		}},
		{name: "leftover pack is a note", note: true, damage: func(t *testing.T, dir string, st store.Store) (string, string) {
			return check.KindNote, leftoverPack(t, st)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir, st, _, sid := checktest.BackedUp(t, 4, 400<<10)
			var kind, key string
			if c.damage != nil {
				kind, key = c.damage(t, dir, st)
				if strings.HasPrefix(key, "snapshots/") {
					key = repo.SnapshotKey(sid)
				}
			}
			res, err := check.Run(ctx, checktest.Open(t, st), check.Options{ReadData: c.readData})
			if err != nil {
				t.Fatal(err)
			}
			if res.Snapshots != 1 || res.Blobs == 0 {
				t.Fatalf("checked %d snapshots, %d blobs", res.Snapshots, res.Blobs)
			}
			switch {
			case c.damage == nil || c.note:
				if !res.OK() {
					t.Fatalf("errors on a healthy repository: %v", res.Errors)
				}
				if c.note && !has(res.Notes, kind, key) {
					t.Fatalf("no note for %s: %v", key, res.Notes)
				}
			default:
				if res.OK() || !has(res.Errors, kind, key) {
					t.Fatalf("want [%s] %s, got errors %v", kind, key, res.Errors)
				}
			}
		})
	}
}

func has(ps []check.Problem, kind, key string) bool {
	for _, p := range ps {
		if p.Kind == kind && p.Key == key {
			return true
		}
	}
	return false
}

func TestParseSubset(t *testing.T) {
	cases := []struct {
		in   string
		want check.Subset
		bad  bool
	}{
		{in: "", want: check.Subset{}},
		{in: "1/10", want: check.Subset{Part: 1, Of: 10}},
		{in: "10%", want: check.Subset{Percent: 10}},
		{in: "0/10", bad: true},
		{in: "11/10", bad: true},
		{in: "0%", bad: true},
		{in: "101%", bad: true},
		{in: "x", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := check.ParseSubset(c.in)
			if (err != nil) != c.bad || (!c.bad && got != c.want) {
				t.Fatalf("ParseSubset(%q) = %+v, %v", c.in, got, err)
			}
		})
	}
}
