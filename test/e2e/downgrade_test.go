//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
)

// attackerStore opens the store that repository flags name, as a store
// writer without the password reaches it: files of a local store, objects
// through the S3 API.
func attackerStore(t *testing.T, flags []string) store.Store {
	t.Helper()
	f := map[string]string{}
	for i := 0; i+1 < len(flags); i += 2 {
		f[flags[i]] = flags[i+1]
	}
	uri := f["-store"]
	if dir, ok := strings.CutPrefix(uri, "local:"); ok {
		return local.New(dir)
	}
	bucket, prefix, _ := strings.Cut(strings.TrimPrefix(uri, "s3:"), "/")
	st, err := s3.Open(context.Background(), s3.Config{Bucket: bucket, Prefix: prefix, Endpoint: f["-s3-endpoint"],
		Region: f["-s3-region"], AccessKey: f["-s3-access-key"], SecretKey: f["-s3-secret-key"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() }) // a test client: nothing to flush
	return st
}

// switchOffEncryption is the attack of issue 36: the config is rewritten
// to say "not encrypted", with a chunker key of the attacker's choosing,
// and the index files and snapshots are taken away (the attacker would
// put them back later), so that the next backup starts afresh, in
// plaintext. keys/ goes too when dropKeys is set.
func switchOffEncryption(t *testing.T, st store.Store, dropKeys bool) {
	t.Helper()
	ctx := context.Background()
	data, err := st.Get(ctx, repo.ConfigKey, repo.MaxConfigSize)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["encrypted"] = false
	m["chunker_key"] = strings.Repeat("00", 32)
	delete(m, "mac")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "config", data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	prefixes := []string{"index/packs/", "snapshots/"}
	if dropKeys {
		prefixes = append(prefixes, "keys/")
	}
	for _, p := range prefixes {
		var keys []string
		if err := st.List(ctx, p, func(oi store.ObjectInfo) error { keys = append(keys, oi.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := st.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// plaintextIn returns the keys of data/ objects that hold marker.
func plaintextIn(t *testing.T, st store.Store, marker string) []string {
	t.Helper()
	ctx := context.Background()
	var found []string
	err := st.List(ctx, "data/", func(oi store.ObjectInfo) error {
		data, err := st.Get(ctx, oi.Key, oi.Size)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(marker)) {
			found = append(found, oi.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDowngradeRefused runs issue 36's attack on a local and an S3
// repository: a store writer without the password switches encryption off.
// The next backup (with the password in the environment, as from cron),
// a list with a wrong password, and a backup without credentials on a host
// that opened the repository before are all refused with one line naming
// the tampering, and nothing is stored in plaintext.
func TestDowngradeRefused(t *testing.T) {
	t.Parallel()
	const marker = "CONFIDENTIAL-issue36"
	kinds := []storeKind{{"local", localStore}, {"s3", s3Store}, {"seaweedfs", seaweedfsStore}}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			if err := os.WriteFile(filepath.Join(src, "secret.txt"), []byte(strings.Repeat(marker+"\n", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
			flags := kind.open(t)
			withPassword := runOpts{env: []string{"CLOUDSTIC_PASSWORD=pw"}}
			for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src}} {
				if res := runWith(t, withPassword, append(args, flags...)...); res.code != 0 {
					t.Fatalf("%v", res)
				}
			}
			st := attackerStore(t, flags)
			switchOffEncryption(t, st, false)

			res := runWith(t, withPassword, append([]string{"backup", "-source", "local:" + src}, flags...)...)
			wantCode(t, res, 1)
			wantOneLineError(t, res, "not encrypted", "tamper")
			if found := plaintextIn(t, st, marker); len(found) > 0 {
				t.Fatalf("plaintext stored in %v", found)
			}
			res = run(t, append([]string{"list", "-password", "wrongpassword"}, flags...)...)
			wantCode(t, res, 1)
			wantOneLineError(t, res, "not encrypted")

			// The key slots go too: nothing in the store tells any more,
			// but this host opened the repository encrypted before.
			switchOffEncryption(t, st, true)
			res = run(t, append([]string{"backup", "-source", "local:" + src}, flags...)...)
			wantCode(t, res, 1)
			wantOneLineError(t, res, "not encrypted", "this host opened")
			if found := plaintextIn(t, st, marker); len(found) > 0 {
				t.Fatalf("plaintext stored in %v", found)
			}
		})
	}
}

// TestUnencryptedRepositoryWithPassword: a repository made with
// -no-encryption works without a password and is refused with one, since
// a user who gives a password expects encryption.
func TestUnencryptedRepositoryWithPassword(t *testing.T) {
	t.Parallel()
	flags := localStore(t)
	src := t.TempDir()
	mustRun(t, append([]string{"init", "-no-encryption"}, flags...)...)
	mustRun(t, append([]string{"backup", "-source", "local:" + src}, flags...)...)
	res := runWith(t, runOpts{env: []string{"CLOUDSTIC_PASSWORD=pw"}}, append([]string{"list"}, flags...)...)
	wantCode(t, res, 1)
	wantOneLineError(t, res, "not encrypted", "no password")
}

// TestRepairConfig: a config written before configs had a MAC opens,
// check notes it, repair config -dry-run changes nothing, repair config
// binds it, and from then on an edit by a store writer is refused.
func TestRepairConfig(t *testing.T) {
	t.Parallel()
	r := newLocalRepo(t)
	path := filepath.Join(strings.TrimPrefix(r[1], "local:"), "config")
	edit := func(fn func(m map[string]any)) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	edit(func(m map[string]any) { delete(m, "mac") })
	if res := mustRun(t, r.with("check")...); !strings.Contains(res.stdout+res.stderr, "repair config") {
		t.Errorf("check does not say how to bind an older config: %v", res)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if res := mustRun(t, r.with("repair", "config", "-dry-run")...); !strings.Contains(res.stdout, "not bound") {
		t.Errorf("dry run: %v", res)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the dry run changed the config (%v)", err)
	}
	var out struct{ Bound, Repaired bool }
	decodeJSON(t, mustRun(t, r.with("repair", "config", "-json")...), &out)
	if !out.Bound || !out.Repaired {
		t.Fatalf("repair config -json: %+v", out)
	}
	if res := mustRun(t, r.with("check")...); strings.Contains(res.stdout+res.stderr, "repair config") {
		t.Errorf("check still notes the config after repair config: %v", res)
	}
	if res := mustRun(t, r.with("repair", "config")...); !strings.Contains(res.stdout, "nothing to do") {
		t.Errorf("a second repair config: %v", res)
	}
	edit(func(m map[string]any) { m["pack_size"] = 2 << 20 })
	res := run(t, r.with("list")...)
	wantCode(t, res, 1)
	wantOneLineError(t, res, "fails authentication")
}
