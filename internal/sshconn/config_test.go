package sshconn

import (
	"errors"
	"testing"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		in   string
		want Config
		path string
		ok   bool
	}{
		{"sftp://host/backups", Config{Host: "host"}, "/backups", true},
		{"sftp://alice@host:2222/backups/repo", Config{User: "alice", Host: "host", Port: 2222}, "/backups/repo", true},
		{"sftp://host/~/backups", Config{Host: "host"}, "backups", true},
		{"sftp://host/~", Config{Host: "host"}, "", true},
		{"sftp://host/~/", Config{Host: "host"}, "", true},
		{"sftp://host/~user/x", Config{Host: "host"}, "/~user/x", true},
		{"sftp://host//srv/backups", Config{Host: "host"}, "//srv/backups", true},
		{"sftp://host", Config{Host: "host"}, "", true},
		{"sftp://host/", Config{Host: "host"}, "/", true},
		{"sftp://[::1]:22/r", Config{Host: "::1", Port: 22}, "/r", true},
		{"sftp://bob@127.0.0.1/a%20b", Config{User: "bob", Host: "127.0.0.1"}, "/a b", true},
		{"sftp://bob@127.0.0.1/~/a%20b", Config{User: "bob", Host: "127.0.0.1"}, "a b", true},
		{"s3://host/x", Config{}, "", false},
		{"sftp:///path", Config{}, "", false},
		{"sftp://alice:secret@host/x", Config{}, "", false},
		{"sftp://@host/x", Config{}, "", false},
		{"sftp://host:0/x", Config{}, "", false},
		{"sftp://host:65536/x", Config{}, "", false},
		{"sftp://host:/x", Config{}, "", false},
		{"sftp://host:ssh/x", Config{}, "", false},
		{"sftp://host/x?y=1", Config{}, "", false},
		{"sftp://host/x#frag", Config{}, "", false},
		{"sftp:host/x", Config{}, "", false},
		{"sftp://ho st/x", Config{}, "", false},
		{"sftp://::1", Config{}, "", false},
		{"sftp://[:]:1/", Config{}, "", false},
		{"", Config{}, "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, p, err := ParseURL(c.in)
			if !c.ok {
				if !errors.Is(err, ErrBadURL) {
					t.Fatalf("ParseURL(%q) = %+v, %q, %v; want ErrBadURL", c.in, got, p, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", c.in, err)
			}
			if got.User != c.want.User || got.Host != c.want.Host || got.Port != c.want.Port || p != c.path {
				t.Fatalf("ParseURL(%q) = %+v %q, want %+v %q", c.in, got, p, c.want, c.path)
			}
			back, bp, err := ParseURL(got.URL(p))
			if err != nil || back.User != got.User || back.Host != got.Host || back.Port != got.Port || bp != p {
				t.Fatalf("round trip through %q = %+v %q, %v", got.URL(p), back, bp, err)
			}
		})
	}
}

func TestURL(t *testing.T) {
	cases := []struct {
		cfg  Config
		path string
		want string
	}{
		{Config{User: "u", Host: "h", Port: 22}, "/srv/r", "sftp://u@h:22/srv/r"},
		{Config{Host: "h"}, "rel", "sftp://h/~/rel"},
		{Config{Host: "h"}, "", "sftp://h"},
		{Config{Host: "::1", Port: 2222}, "r", "sftp://[::1]:2222/~/r"},
		{Config{Host: "::1"}, "/", "sftp://[::1]/"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := c.cfg.URL(c.path); got != c.want {
				t.Fatalf("URL(%q) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}

// FuzzParseURL checks that ParseURL never panics and that whatever it
// accepts formats back (URL) to the same server and path.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"sftp://host/backups", "sftp://alice@host:2222//srv/r", "sftp://[::1]:22/r",
		"sftp://h/a%20b", "sftp://u:p@h/x", "sftp://h/x?q", "sftp://[fe80::1%25eth0]:22/x", "sftp://h/~/x", "sftp://h/~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, p, err := ParseURL(s)
		if err != nil {
			return
		}
		if cfg.Host == "" {
			t.Fatalf("ParseURL(%q) accepted an empty host", s)
		}
		back, bp, err := ParseURL(cfg.URL(p))
		if err != nil {
			t.Fatalf("ParseURL(%q) = %+v %q, whose URL %q does not parse: %v", s, cfg, p, cfg.URL(p), err)
		}
		if back.User != cfg.User || back.Host != cfg.Host || back.Port != cfg.Port || bp != p {
			t.Fatalf("ParseURL(%q) = %+v %q, but its URL %q parses to %+v %q", s, cfg, p, cfg.URL(p), back, bp)
		}
	})
}
