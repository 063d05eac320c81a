package cli

import (
	"flag"
	"time"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
)

// timeoutFlags are the deadlines of store requests.
type timeoutFlags struct {
	connect, response time.Duration
	// envErr is a malformed CLOUDSTIC_STORE_*_TIMEOUT, reported when the
	// store options are built (register cannot fail).
	envErr error
}

func (f *timeoutFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.connect = f.envDuration(getenv, "CLOUDSTIC_STORE_CONNECT_TIMEOUT", operation.DefaultConnectTimeout)
	f.response = f.envDuration(getenv, "CLOUDSTIC_STORE_RESPONSE_TIMEOUT", operation.DefaultResponseTimeout)
	fs.DurationVar(&f.connect, "store-connect-timeout", f.connect,
		"deadline of a connect plus TLS/SSH handshake to an S3 or SFTP store (env CLOUDSTIC_STORE_CONNECT_TIMEOUT)")
	fs.DurationVar(&f.response, "store-response-timeout", f.response,
		"deadline of a store's answer once a request is sent; a request that times out is not retried (env CLOUDSTIC_STORE_RESPONSE_TIMEOUT)")
}

// envDuration returns the duration in the environment variable name, or def.
func (f *timeoutFlags) envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	v := getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		f.envErr = usageErr("%s=%q: want a positive duration such as 30s", name, v)
		return def
	}
	return d
}

// check reports a malformed environment variable or a flag that is not
// positive.
func (f *timeoutFlags) check() error {
	if f.envErr != nil {
		return f.envErr
	}
	if f.connect <= 0 || f.response <= 0 {
		return usageErr("-store-connect-timeout and -store-response-timeout must be positive")
	}
	return nil
}
