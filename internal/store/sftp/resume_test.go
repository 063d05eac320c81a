package sftp

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
	"github.com/cloudstic/cloudstic/internal/store/storetest"
)

// resumeEnv is what a fault of TestOpenRangeResumes acts on.
type resumeEnv struct {
	t      *testing.T
	s      *Store       // the store under test, through p
	other  *Store       // a second store on the same directory, direct
	p      *fault.Proxy // between s and the server
	rc     io.Reader    // the stream under test
	got    *bytes.Buffer
	cancel context.CancelFunc // cancels the stream's context
}

// read appends n bytes of the stream to got.
func (e resumeEnv) read(n int64) {
	e.t.Helper()
	if _, err := io.CopyN(e.got, e.rc, n); err != nil {
		e.t.Fatalf("read of %d bytes: %v", n, err)
	}
}

// proxied returns cfg with the connection made through a new fault.Proxy.
func proxied(t *testing.T, cfg Config) (Config, *fault.Proxy) {
	t.Helper()
	p, err := fault.NewProxy(net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() }) //nolint:errcheck // test teardown
	host, port, err := net.SplitHostPort(p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = host
	if cfg.Port, err = strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	// known_hosts names the server's own port, not the proxy's.
	cfg.InsecureIgnoreHostKey = true
	return cfg, p
}

// TestOpenRangeResumes: a stream whose connection drops between two reads
// goes on, on a new connection, at exactly the byte it had reached; one
// whose file is gone or changed by then fails with store.ErrNotFound or
// store.ErrChanged, and one whose context ended fails without dialling.
// Every byte it returned is the file's.
func TestOpenRangeResumes(t *testing.T) {
	data := make([]byte, 3<<20+12345)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	const off, head = 1000, 1 << 20
	want := data[off : len(data)-off]
	cut := func(e resumeEnv) { e.p.Cut() }
	cases := []struct {
		name  string
		fault func(e resumeEnv)
		err   error // nil: the whole range
		dials int64 // connections opened after the fault
	}{
		{"network cut", cut, nil, 1},
		{"cut in a read", func(e resumeEnv) { e.p.CutAfter(100_000) }, nil, 1},
		{"ssh closed", func(e resumeEnv) { dropConnection(e.t, e.s) }, nil, 1},
		{"cut twice", func(e resumeEnv) { e.p.Cut(); e.read(4567); e.p.Cut() }, nil, 2},
		{"file removed", func(e resumeEnv) {
			e.p.Cut()
			if err := e.other.Delete(context.Background(), "pack"); err != nil {
				e.t.Fatal(err)
			}
		}, store.ErrNotFound, 1},
		{"file replaced", func(e resumeEnv) {
			e.p.Cut()
			if _, err := e.other.Put(context.Background(), "pack", data[:len(data)-1], store.PutOptions{}); err != nil {
				e.t.Fatal(err)
			}
		}, store.ErrChanged, 1},
		{"context cancelled", func(e resumeEnv) { e.p.Cut(); e.cancel() }, context.Canceled, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := testConfig(t)
			other := mustOpen(t, base)
			if _, err := other.Put(context.Background(), "pack", data, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			cfg, p := proxied(t, base)
			cfg.CreateDir = false
			s := mustOpen(t, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rc, err := s.OpenRange(ctx, "pack", off, int64(len(want)))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close() //nolint:errcheck // read-only stream
			e := resumeEnv{t: t, s: s, other: other, p: p, rc: rc, got: new(bytes.Buffer), cancel: cancel}
			e.read(head)
			before := p.Accepted()
			c.fault(e)
			_, err = io.Copy(e.got, rc)
			storetest.CheckResumed(t, e.got.Bytes(), want, err, c.err)
			if n := p.Accepted() - before; n != c.dials {
				t.Errorf("%d connections after the fault, want %d", n, c.dials)
			}
			t.Logf("read %d bytes; error: %v", e.got.Len(), err)
		})
	}
}
