package fault

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// serveBytes listens on 127.0.0.1 and writes data to every connection.
func serveBytes(t *testing.T, data []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) //nolint:errcheck // test teardown
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()      //nolint:errcheck // test server
				_, _ = c.Write(data) // a cut connection fails the write
			}()
		}
	}()
	return ln.Addr().String()
}

// TestProxyCut: Cut ends the connections open at the time and the proxy
// goes on forwarding new ones; CutAfter lets exactly n bytes through
// first.
func TestProxyCut(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1_600_000) // more than sockets hold
	cases := []struct {
		name   string
		before func(p *Proxy)                           // before the dial
		after  func(t *testing.T, p *Proxy, c net.Conn) // after it
		check  func(n int) bool                         // of the bytes the connection read
	}{
		{"CutAfter", func(p *Proxy) { p.CutAfter(12345) }, nil, func(n int) bool { return n == 12345 }},
		{"Cut", nil, func(t *testing.T, p *Proxy, c net.Conn) {
			// A byte read shows the proxy tracks the connection.
			if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			p.Cut()
		}, func(n int) bool { return n < len(data)-1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewProxy(serveBytes(t, data))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close() //nolint:errcheck // test teardown
			if c.before != nil {
				c.before(p)
			}
			conn, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close() //nolint:errcheck // test teardown
			skip := 0
			if c.after != nil {
				c.after(t, p, conn)
				skip = 1
			}
			got, _ := io.ReadAll(conn) // ends with EOF or a reset
			if !c.check(len(got)) || !bytes.Equal(got, data[skip:skip+len(got)]) {
				t.Fatalf("read %d bytes through the cut", len(got))
			}
			conn2, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn2.Close() //nolint:errcheck // test teardown
			if got, err := io.ReadAll(conn2); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after the cut: %d bytes, %v; want all %d", len(got), err, len(data))
			}
		})
	}
}

// TestProxyRefuse: while Refuse is on, every new connection is accepted
// (and counted) and reset before a byte is forwarded; a connection open
// before is left alone; Refuse(false) forwards new ones again.
func TestProxyRefuse(t *testing.T) {
	data := []byte("hello through the proxy")
	p, err := NewProxy(serveBytes(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() //nolint:errcheck // test teardown
	// read dials the proxy and reads until the connection ends; a refused
	// connection may fail the dial itself (reset during connect).
	read := func() ([]byte, error) {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			return nil, err
		}
		defer c.Close() //nolint:errcheck // test teardown
		return io.ReadAll(c)
	}
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close() //nolint:errcheck // test teardown
	if _, err := io.ReadFull(open, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		refuse  bool
		wantAll bool // the connection reads all of data; else none of it
	}{
		{"refusing", true, false},
		{"still refusing", true, false},
		{"forwarding again", false, true},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			p.Refuse(s.refuse)
			got, err := read()
			switch {
			case s.wantAll && (err != nil || !bytes.Equal(got, data)):
				t.Fatalf("read %q, %v; want %q", got, err, data)
			case !s.wantAll && len(got) != 0:
				t.Fatalf("a refused connection read %q", got)
			}
			if n := p.Accepted(); n != int64(i+2) {
				t.Fatalf("Accepted() = %d, want %d", n, i+2)
			}
			t.Logf("read %d bytes, error %v", len(got), err)
		})
	}
	if got, err := io.ReadAll(open); err != nil || !bytes.Equal(got, data[1:]) {
		t.Fatalf("the connection open before Refuse read %q, %v; want %q", got, err, data[1:])
	}
}
