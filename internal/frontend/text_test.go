package frontend

import "testing"

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {50 << 20, "50.0 MiB"}, {3 << 30, "3.0 GiB"}, {1 << 62, "4.0 EiB"}} {
		if got := HumanBytes(tc.n); got != tc.want {
			t.Errorf("HumanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"localhost:8080", true}, {"127.0.0.1", true}, {"127.0.0.1:80", true}, {"127.1.2.3", true},
		{"::1", true}, {"[::1]:8080", true}, {"[::1]", true},
		{"", false}, {":8080", false}, {"0.0.0.0", false}, {"::", false}, {"192.168.1.5:80", false},
		{"localhost.evil.example", false}, {"evil.example:8080", false},
	} {
		if got := LoopbackHost(tc.host); got != tc.want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"}, {"a\nb\n", "a; b"}, {"  padded \n", "padded"}, {"", ""},
	} {
		if got := OneLine(tc.in); got != tc.want {
			t.Errorf("OneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
