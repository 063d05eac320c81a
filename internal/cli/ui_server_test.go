package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUIServerLimits: the dashboard's server closes a keep-alive
// connection left idle, and one whose headers never end, and refuses
// oversized headers. Short limits stand in for the defaults; each wait for
// the server to close is guarded by a deadline far beyond them.
func TestUIServerLimits(t *testing.T) {
	t.Parallel()
	const guard = 20 * time.Second
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }) // the client's problem
	hs := newUIServer(context.Background(), h, uiServerLimits{readHeader: 100 * time.Millisecond, idle: 100 * time.Millisecond, maxHeaderBytes: 1 << 10})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		if err := hs.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	})

	// closedByServer reads what the server still sends until it closes
	// the connection.
	closedByServer := func(t *testing.T, conn net.Conn, br *bufio.Reader) string {
		t.Helper()
		if err := conn.SetReadDeadline(time.Now().Add(guard)); err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(br)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server kept the connection open for %v", guard)
		}
		return string(rest)
	}
	dial := func(t *testing.T, request string) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() }) // the server closed it already
		if _, err := io.WriteString(conn, request); err != nil {
			t.Fatal(err)
		}
		return conn, bufio.NewReader(conn)
	}

	t.Run("idle keep-alive connection", func(t *testing.T) {
		conn, br := dial(t, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil || string(body) != "ok" || res.Close {
			t.Fatalf("response %q (%v), close %v: want ok on a kept-alive connection", body, err, res.Close)
		}
		if rest := closedByServer(t, conn, br); rest != "" {
			t.Errorf("the server sent %q on the idle connection", rest)
		}
	})
	t.Run("headers never finished", func(t *testing.T) {
		conn, br := dial(t, "GET / HTTP/1.1\r\nHost: x\r\n")
		closedByServer(t, conn, br)
	})
	t.Run("oversized headers", func(t *testing.T) {
		conn, br := dial(t, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 16<<10)+"\r\n\r\n")
		if rest := closedByServer(t, conn, br); !strings.HasPrefix(rest, "HTTP/1.1 431") {
			t.Errorf("oversized headers answered %.40q, want 431", rest)
		}
	})
}
