package frontend

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// HumanBytes formats a byte count with binary units: "512 B", "1.5 KiB",
// "3.0 GiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// LoopbackHost reports whether a host, or a HOST:PORT, names only the
// loopback interface: localhost, 127.0.0.0/8 or ::1 ("" means every
// interface, and is not).
func LoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// OneLine folds a message onto one line: errors.Join puts each joined
// error on a line of its own, and a script reading the command line's
// stderr expects the error to be its last line, whole (the dashboard
// shows it in one line too).
func OneLine(msg string) string {
	return strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
}
