package sftp

import (
	"testing"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		in   string
		want Config
		ok   bool
	}{
		{"sftp://host/backups", Config{Host: "host", Path: "backups"}, true},
		{"sftp://alice@host:2222/backups/repo", Config{User: "alice", Host: "host", Port: 2222, Path: "backups/repo"}, true},
		{"sftp://host//srv/backups", Config{Host: "host", Path: "/srv/backups"}, true},
		{"sftp://host", Config{Host: "host"}, true},
		{"sftp://host/", Config{Host: "host"}, true},
		{"sftp://[::1]:22/r", Config{Host: "::1", Port: 22, Path: "r"}, true},
		{"sftp://bob@127.0.0.1/a%20b", Config{User: "bob", Host: "127.0.0.1", Path: "a b"}, true},
		{"s3://host/x", Config{}, false},
		{"sftp:///path", Config{}, false},
		{"sftp://alice:secret@host/x", Config{}, false},
		{"sftp://@host/x", Config{}, false},
		{"sftp://host:0/x", Config{}, false},
		{"sftp://host:65536/x", Config{}, false},
		{"sftp://host:/x", Config{}, false},
		{"sftp://host:ssh/x", Config{}, false},
		{"sftp://host/x?y=1", Config{}, false},
		{"sftp://host/x#frag", Config{}, false},
		{"sftp:host/x", Config{}, false},
		{"sftp://ho st/x", Config{}, false},
		{"sftp://::1", Config{}, false},
		{"sftp://[:]:1/", Config{}, false},
		{"", Config{}, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseURL(c.in)
			if !c.ok {
				if err == nil {
					t.Fatalf("ParseURL(%q) = %+v, want an error", c.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", c.in, err)
			}
			if got.User != c.want.User || got.Host != c.want.Host || got.Port != c.want.Port || got.Path != c.want.Path {
				t.Fatalf("ParseURL(%q) = %+v, want %+v", c.in, got, c.want)
			}
			back, err := ParseURL(got.URL())
			if err != nil || back.User != got.User || back.Host != got.Host || back.Port != got.Port || back.Path != got.Path {
				t.Fatalf("round trip through %q = %+v, %v", got.URL(), back, err)
			}
		})
	}
}

func TestURL(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{User: "u", Host: "h", Port: 22, Path: "/srv/r"}, "sftp://u@h:22//srv/r"},
		{Config{Host: "h", Path: "rel"}, "sftp://h/rel"},
		{Config{Host: "::1", Port: 2222, Path: "r"}, "sftp://[::1]:2222/r"},
		{Config{Host: "::1"}, "sftp://[::1]/"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := c.cfg.URL(); got != c.want {
				t.Fatalf("URL() = %q, want %q", got, c.want)
			}
		})
	}
}

// FuzzParseURL checks that ParseURL never panics and that whatever it
// accepts formats back (URL) to the same configuration.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"sftp://host/backups", "sftp://alice@host:2222//srv/r", "sftp://[::1]:22/r",
		"sftp://h/a%20b", "sftp://u:p@h/x", "sftp://h/x?q", "sftp://[fe80::1%25eth0]:22/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseURL(s)
		if err != nil {
			return
		}
		if cfg.Host == "" {
			t.Fatalf("ParseURL(%q) accepted an empty host", s)
		}
		back, err := ParseURL(cfg.URL())
		if err != nil {
			t.Fatalf("ParseURL(%q) = %+v, whose URL %q does not parse: %v", s, cfg, cfg.URL(), err)
		}
		if back.User != cfg.User || back.Host != cfg.Host || back.Port != cfg.Port || back.Path != cfg.Path {
			t.Fatalf("ParseURL(%q) = %+v, but its URL %q parses to %+v", s, cfg, cfg.URL(), back)
		}
	})
}
