package lock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/cloudstic/cloudstic/internal/repo/lock"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/local"
	"github.com/cloudstic/cloudstic/internal/store/s3"
	"github.com/cloudstic/cloudstic/internal/store/s3/s3test"
)

// TestHostileLockObjects stores garbage, empty and huge lock objects, on
// the local store and through the APIs of the S3 servers (versitygw,
// SeaweedFS) and the SFTP server: they count as held (acquiring fails with
// ErrLocked and ErrBadLock and a one-line message), List reports them, and
// break-lock removes them. A huge one is
// never read whole: the store refuses it with store.ErrTooLarge (over
// lock.MaxPayload, before its content is read where the store tells the
// size first).
func TestHostileLockObjects(t *testing.T) {
	t.Parallel()
	type named struct {
		name string
		open func(t *testing.T) store.Store
	}
	stores := []named{
		{"local", func(t *testing.T) store.Store { return local.New(t.TempDir()) }},
	}
	if runtime.GOOS == "windows" {
		// Windows adds nothing to the servers' side, tested on Linux:
		// here the local store's files are what is new.
		t.Log("Windows: the local store only")
	} else {
		stores = append(stores, named{"sftp", openSFTP})
		for _, srv := range s3test.Servers(t) {
			stores = append(stores, named{srv.Name, func(t *testing.T) store.Store { return openS3(t, srv, s3.FlavorS3) }})
		}
	}
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			testHostileLockObjects(t, sc.open)
		})
	}
}

func testHostileLockObjects(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		key  string
		data []byte
	}{
		{"garbage exclusive", lock.ExclusiveKey, []byte("\x00\xff not json")},
		{"empty exclusive", lock.ExclusiveKey, nil},
		{"huge exclusive", lock.ExclusiveKey, bytes.Repeat([]byte(`{"operation":"backup",`), 1<<16)},
		{"JSON null exclusive", lock.ExclusiveKey, []byte("null")},
		{"shared payload under the exclusive key", lock.ExclusiveKey,
			[]byte(`{"operation":"backup","holder":"h","acquired_at":"2026-01-01T00:00:00Z","expires_at":"2999-01-01T00:00:00Z","is_shared":true}`)},
		{"garbage shared", lock.SharedPrefix + "20260101T000000Z-0123456789abcdef", []byte("garbage")},
		{"empty shared", lock.SharedPrefix + "20260101T000000Z-0123456789abcdef", nil},
		{"huge shared", lock.SharedPrefix + "20260101T000000Z-0123456789abcdef", bytes.Repeat([]byte{'x'}, 1<<20)},
		{"just over the bound", lock.ExclusiveKey, bytes.Repeat([]byte{' '}, lock.MaxPayload+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := open(t)
			t.Cleanup(func() {
				if err := st.Close(); err != nil {
					t.Error(err)
				}
			})
			if _, err := st.Put(ctx, tc.key, tc.data, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			acquire := lock.AcquireExclusive
			if tc.key == lock.ExclusiveKey {
				acquire = lock.AcquireShared // blocked by any exclusive object
			}
			_, err := acquire(ctx, st, "test", lock.Options{})
			if !errors.Is(err, lock.ErrLocked) || !errors.Is(err, lock.ErrBadLock) {
				t.Fatalf("acquire: %v, want ErrLocked and ErrBadLock", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 1000 {
				t.Errorf("error is not one short line: %d bytes %q", len(msg), msg)
			}
			infos, err := lock.List(ctx, st, lock.Options{})
			if err != nil || len(infos) != 1 || !errors.Is(infos[0].Err, lock.ErrBadLock) {
				t.Fatalf("List: %+v %v, want one unreadable lock", infos, err)
			}
			if tooLarge := len(tc.data) > lock.MaxPayload; tooLarge != errors.Is(infos[0].Err, store.ErrTooLarge) {
				t.Errorf("List: %v; want store.ErrTooLarge: %v", infos[0].Err, tooLarge)
			}
			if infos[0].Size != int64(len(tc.data)) {
				t.Errorf("List: size %d, want %d", infos[0].Size, len(tc.data))
			}
			if _, err := lock.Break(ctx, st, true, lock.Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Stat(ctx, tc.key); err != nil {
				t.Errorf("break-lock -stale-only removed an unreadable lock: %v", err)
			}
			if _, err := lock.Break(ctx, st, false, lock.Options{}); err != nil {
				t.Fatal(err)
			}
			l, err := acquire(ctx, st, "test", lock.Options{})
			if err != nil {
				t.Fatalf("acquire after break-lock: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHostileLockFieldsInErrors: a lock object whose holder, operation or
// key holds terminal escapes, newlines or bidi controls (anyone who can
// write to the store can plant one) blocks the acquire with a message
// that holds none of them raw, and names them escaped.
func TestHostileLockFieldsInErrors(t *testing.T) {
	t.Parallel()
	const evil = "\x1b[2J\x1b]0;pwned\x07\r\nfake line\u202e"
	payload := `{"operation":"` + jsonEscape(evil) + `","holder":"` + jsonEscape(evil) +
		`","acquired_at":"2026-01-01T00:00:00Z","expires_at":"2999-01-01T00:00:00Z"}`
	tests := []struct {
		name, key string
		data      []byte
	}{
		{"exclusive lock", lock.ExclusiveKey, []byte(payload)},
		{"shared lock", lock.SharedPrefix + "20260101T000000Z-0123456789abcdef", []byte(strings.Replace(payload, `"}`, `","is_shared":true}`, 1))},
		{"unreadable lock with a hostile key", lock.SharedPrefix + "x" + evil, []byte("garbage")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && strings.ContainsFunc(tc.key, unicode.IsControl) {
				t.Skip("Windows file names cannot hold control characters: no local store on Windows holds this key")
			}
			t.Parallel()
			ctx := context.Background()
			st := local.New(t.TempDir())
			if _, err := st.Put(ctx, tc.key, tc.data, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			acquire := lock.AcquireExclusive
			if tc.key == lock.ExclusiveKey {
				acquire = lock.AcquireShared
			}
			_, err := acquire(ctx, st, "test", lock.Options{})
			if !errors.Is(err, lock.ErrLocked) {
				t.Fatalf("acquire: %v, want ErrLocked", err)
			}
			msg := err.Error()
			if i := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsGraphic(r) }); i >= 0 {
				t.Fatalf("error holds %U raw: %q", []rune(msg[i:])[0], msg)
			}
			if !strings.Contains(msg, `\x1b[2J\x1b]0;pwned\a\r\nfake line\u202e`) {
				t.Errorf("error does not show the escaped field: %s", msg)
			}
		})
	}
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(data[1 : len(data)-1])
}
