package fault

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy is a TCP proxy on 127.0.0.1 for tests of what a client does when a
// server stops answering. It forwards every connection to its upstream
// until Freeze; after that it still accepts connections and keeps them
// open but forwards nothing in either direction, like a server that hangs
// or a network path that silently drops packets. With no upstream it never
// forwards anything: a listener that accepts and never answers. While
// Refuse is on, it resets every new connection instead.
type Proxy struct {
	ln       net.Listener
	upstream string
	accepted atomic.Int64
	refusing atomic.Bool

	mu     sync.Mutex
	frozen bool
	thawed chan struct{} // closed by Thaw; replaced by Freeze
	done   chan struct{} // closed by Close
	conns  []net.Conn
	wg     sync.WaitGroup

	// cutLeft is how many more bytes go to the clients before a Cut,
	// when cutArmed (CutAfter).
	cutLeft  int64
	cutArmed bool
}

// NewProxy listens on a free port of 127.0.0.1 and forwards to upstream
// ("host:port"); an empty upstream makes a proxy that is frozen for good.
func NewProxy(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, thawed: make(chan struct{}), done: make(chan struct{})}
	close(p.thawed)
	if upstream == "" {
		p.Freeze()
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is the number of connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Freeze stops forwarding: bytes already in flight stay in the proxy.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		p.thawed = make(chan struct{})
	}
}

// Thaw resumes forwarding (not for a proxy without upstream).
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen && p.upstream != "" {
		p.frozen = false
		close(p.thawed)
	}
}

// Refuse(true) makes the proxy reset every connection it accepts from now
// on, before any byte is forwarded, like a server that is restarting or a
// network that is down: the client's dial or handshake fails with a
// connection reset (or EOF). Connections open already are left alone (Cut
// ends them). Refuse(false) goes back to forwarding new connections.
// Refused connections count in Accepted.
func (p *Proxy) Refuse(on bool) { p.refusing.Store(on) }

// Cut closes every connection open now, as a network failure or a server
// restart would, and goes on accepting (and forwarding) new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close() //nolint:errcheck // cutting; both peers see the close
	}
}

// CutAfter makes the proxy Cut once n more bytes have gone from the
// upstream to the clients: the network fails in the middle of an answer,
// the last piece forwarded cut short at the nth byte.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLeft, p.cutArmed = n, true
}

// toClient returns how many of n bytes on their way to a client to
// forward, and whether to Cut after them (CutAfter).
func (p *Proxy) toClient(n int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cutArmed {
		return n, false
	}
	if p.cutLeft > int64(n) {
		p.cutLeft -= int64(n)
		return n, false
	}
	p.cutArmed = false
	return int(p.cutLeft), true
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	for _, c := range p.conns {
		c.Close() //nolint:errcheck // tearing down; the peer sees the close
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// track remembers c so that Close closes it.
func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		if p.refusing.Load() {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) //nolint:errcheck // best effort: without it the client sees EOF, not a reset
			}
			c.Close() //nolint:errcheck // refusing; the client sees the reset
			continue
		}
		p.track(c)
		if p.upstream == "" {
			continue // hold it open, never answer
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close() //nolint:errcheck // the client sees the close
			continue
		}
		p.track(up)
		p.wg.Add(2)
		go p.pipe(up, c, false)
		go p.pipe(c, up, true)
	}
}

// pipe copies from src to dst, waiting while the proxy is frozen; toClient
// says dst is a client (see CutAfter).
func (p *Proxy) pipe(dst, src net.Conn, toClient bool) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thawed := p.thawed
			p.mu.Unlock()
			select {
			case <-thawed:
			case <-p.done:
				return
			}
			k, cut := n, false
			if toClient {
				k, cut = p.toClient(n)
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
			if cut {
				p.Cut()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite() //nolint:errcheck // half-close; the peer's own reads report errors
				}
			}
			return
		}
	}
}
