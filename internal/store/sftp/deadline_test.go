package sftp

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/fault"
)

// TestDeadlines: a server that accepts the connection and never answers
// fails Open with store.ErrTimeout, and one that stops answering after Open
// fails the request in flight with store.ErrTimeout (the keepalive
// watchdog closes the connection), without dialling again.
func TestDeadlines(t *testing.T) {
	base := testConfig(t)
	upstream := net.JoinHostPort(base.Host, strconv.Itoa(base.Port))
	ctx := context.Background()
	cases := []struct {
		name     string
		upstream string // "" accepts and never answers
		// op runs what must time out; it returns the proxy's accepted
		// count just before that.
		op func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error)
	}{
		{"silent at open", "", func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error) {
			_, err := Open(ctx, cfg)
			return 0, err
		}},
		{"hangs after open", upstream, func(t *testing.T, cfg Config, p *fault.Proxy) (int64, error) {
			s := mustOpen(t, cfg)
			if _, err := s.Put(ctx, "k", []byte("v"), store.PutOptions{}); err != nil {
				t.Fatalf("Put before the freeze: %v", err)
			}
			p.Freeze()
			before := p.Accepted()
			_, err := s.Get(ctx, "k", 1<<30)
			return before, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := fault.NewProxy(c.upstream)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close() //nolint:errcheck // test teardown
			cfg := base
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
			cfg.ConnectTimeout, cfg.ResponseTimeout = time.Second, 300*time.Millisecond
			before, err := c.op(t, cfg, p)
			if !errors.Is(err, store.ErrTimeout) {
				t.Fatalf("error %v, want store.ErrTimeout", err)
			}
			if got := p.Accepted() - before; got > 1 {
				t.Errorf("%d connections after the server stopped answering, want at most 1", got)
			}
			t.Logf("error: %v", err)
		})
	}
}
