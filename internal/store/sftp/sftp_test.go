package sftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cloudstic/cloudstic/internal/sshconn"
	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// testConfig returns the configuration of the test server started by
// scripts/sftp-server.sh, with Path set to a new, not yet existing
// directory under SFTP_TEST_PATH.
func testConfig(t *testing.T) Config {
	t.Helper()
	need := []string{"SFTP_TEST_HOST", "SFTP_TEST_PORT", "SFTP_TEST_USER", "SFTP_TEST_KEY", "SFTP_TEST_KNOWN_HOSTS", "SFTP_TEST_PATH"}
	for _, v := range need {
		if os.Getenv(v) != "" {
			continue
		}
		if os.Getenv("CLOUDSTIC_TEST_NO_SERVERS") == "1" {
			t.Skipf("%s not set and CLOUDSTIC_TEST_NO_SERVERS=1", v)
		}
		t.Fatalf(`%s not set: start the test SFTP server with eval "$(scripts/sftp-server.sh)" (as root), or set CLOUDSTIC_TEST_NO_SERVERS=1 to skip`, v)
	}
	port, err := strconv.Atoi(os.Getenv("SFTP_TEST_PORT"))
	if err != nil {
		t.Fatalf("SFTP_TEST_PORT: %v", err)
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	return Config{
		Config: sshconn.Config{
			User:           os.Getenv("SFTP_TEST_USER"),
			Host:           os.Getenv("SFTP_TEST_HOST"),
			Port:           port,
			KeyFile:        os.Getenv("SFTP_TEST_KEY"),
			KnownHostsFile: os.Getenv("SFTP_TEST_KNOWN_HOSTS"),
		},
		Path:      os.Getenv("SFTP_TEST_PATH") + "/t-" + hex.EncodeToString(rnd[:]),
		CreateDir: true,
		Logf:      t.Logf,
	}
}

func mustOpen(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	base := testConfig(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		cfg := testConfig(t)
		cfg.Logf = base.Logf
		s, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !s.Capabilities().CreateIfAbsent {
			t.Error("OpenSSH offers hardlink@openssh.com, but CreateIfAbsent is not declared")
		}
		return s
	})
}

func TestCreateDir(t *testing.T) {
	cfg := testConfig(t)
	cfg.Path += "/a/b"
	cfg.CreateDir = false
	if _, err := Open(context.Background(), cfg); !errors.Is(err, ErrNoRepositoryDir) {
		t.Fatalf("Open of a missing dir = %v, want ErrNoRepositoryDir", err)
	}
	cfg.CreateDir = true
	mustOpen(t, cfg)
	cfg.CreateDir = false
	s := mustOpen(t, cfg)
	if got, want := s.Describe(), fmt.Sprintf("sftp://%s@%s:%d%s", cfg.User, cfg.Host, cfg.Port, cfg.Path); got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

func TestRelativePath(t *testing.T) {
	cfg := testConfig(t)
	cfg.Path = filepath.Base(cfg.Path) // relative to the login dir, SFTP_TEST_PATH
	s := mustOpen(t, cfg)
	if _, err := s.Put(context.Background(), "k", []byte("rel"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(os.Getenv("SFTP_TEST_PATH"), cfg.Path, "k"))
	if err != nil || string(got) != "rel" {
		t.Fatalf("object not under the login dir: %q, %v", got, err)
	}
}

// dropConnection closes the store's SSH connection under it, as a network
// failure would.
func dropConnection(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if err := c.SSH.Close(); err != nil {
		t.Fatal(err)
	}
	<-c.Dead()
}

func TestReconnect(t *testing.T) {
	ctx := context.Background()
	ops := []struct {
		name string
		op   func(s *Store) error
	}{
		{"Get", func(s *Store) error {
			got, err := s.Get(ctx, "d/key", 1<<30)
			if err == nil && string(got) != "v1" {
				err = fmt.Errorf("got %q", got)
			}
			return err
		}},
		{"Stat", func(s *Store) error { _, err := s.Stat(ctx, "d/key"); return err }},
		{"Put", func(s *Store) error { _, err := s.Put(ctx, "d/key", []byte("v2"), store.PutOptions{}); return err }},
		{"CreateIfAbsent", func(s *Store) error {
			_, err := s.Put(ctx, "d/new", []byte("n"), store.PutOptions{IfAbsent: true})
			return err
		}},
		{"Delete", func(s *Store) error { return s.Delete(ctx, "d/key") }},
		{"List", func(s *Store) error {
			n := 0
			err := s.List(ctx, "d/", func(store.ObjectInfo) error { n++; return nil })
			if err == nil && n != 1 {
				err = fmt.Errorf("listed %d keys, want 1", n)
			}
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			s := mustOpen(t, testConfig(t))
			if _, err := s.Put(ctx, "d/key", []byte("v1"), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			dropConnection(t, s)
			if err := o.op(s); err != nil {
				t.Fatalf("%s after a dropped connection: %v", o.name, err)
			}
		})
	}
}

// TestRelink checks how a create-if-absent whose hard link was lost with
// the connection learns the link's outcome.
func TestRelink(t *testing.T) {
	s := mustOpen(t, testConfig(t))
	c := s.conn.SFTP
	cases := []struct {
		name    string
		setup   func(tmp, p string) error
		want    error
		content string
	}{
		{"LinkHappened", func(tmp, p string) error { return c.Link(tmp, p) }, nil, "mine"},
		{"LinkNotSent", func(string, string) error { return nil }, nil, "mine"},
		{"OtherWriterWon", func(_, p string) error {
			other, err := s.writeTemp(c, s.root, []byte("theirs"))
			if err == nil {
				err = c.Link(other, p)
			}
			return err
		}, store.ErrExists, "theirs"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("relink-%d", i)
			p, err := s.path(key)
			if err != nil {
				t.Fatal(err)
			}
			tmp, err := s.writeTemp(c, s.root, []byte("mine"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeTemp(c, tmp) })
			if err := tc.setup(tmp, p); err != nil {
				t.Fatal(err)
			}
			before, err := c.Stat(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if err := relink(c, tmp, p); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("relink = %v, want %v", err, tc.want)
			}
			got, err := s.Get(context.Background(), key, 1<<30)
			if err != nil || !bytes.Equal(got, []byte(tc.content)) {
				t.Fatalf("Get = %q, %v; want %q", got, err, tc.content)
			}
			after, err := c.Stat(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("probe left the mtime at %v, was %v", after.ModTime(), before.ModTime())
			}
		})
	}
}

func TestClosed(t *testing.T) {
	s, err := Open(context.Background(), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "k", 1<<30); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close = %v, want ErrClosed", err)
	}
}

// TestCancelInFlight cancels operations while they run: each either
// finishes or reports the context's error, and the store keeps working.
func TestCancelInFlight(t *testing.T) {
	s := mustOpen(t, testConfig(t))
	data := bytes.Repeat([]byte("x"), 8<<20)
	if _, err := s.Put(context.Background(), "big", data, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, "big", 1<<30); return err }},
		{"Put", func(ctx context.Context) error { _, err := s.Put(ctx, "big2", data, store.PutOptions{}); return err }},
		{"Create", func(ctx context.Context) error {
			_, err := s.Put(ctx, "big3", data, store.PutOptions{IfAbsent: true})
			if errors.Is(err, store.ErrExists) {
				err = nil // an earlier round created it
			}
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			for range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- o.op(ctx) }()
				cancel()
				if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled %s = %v, want success or context.Canceled", o.name, err)
				}
				got, err := s.Get(context.Background(), "big", 1<<30)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("Get after a cancelled %s: %d bytes, %v", o.name, len(got), err)
				}
			}
		})
	}
}
