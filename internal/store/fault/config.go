package fault

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EnvVar is the environment variable test/crash's fault-injecting build of
// the command line reads to run every store behind this wrapper. Its value
// is parsed by Parse.
const EnvVar = "CLOUDSTIC_TEST_FAULTS"

// ErrBadSpec is returned by Parse for a malformed specification.
var ErrBadSpec = errors.New("bad fault specification")

// Config chooses the faults. Rates are probabilities per operation (0..1).
type Config struct {
	// Seed seeds the random choices (the same seed and the same sequence
	// of operations inject the same faults).
	Seed int64
	// ErrorRate: an operation fails with ErrInjected before reaching the
	// inner store.
	ErrorRate float64
	// AckLossRate: a Put reaches the inner store and succeeds, but the
	// caller gets ErrInjected (a lost reply).
	AckLossRate float64
	// LatencyRate: an operation first waits a random time up to Latency
	// (cut short by its context).
	LatencyRate float64
	// Latency is the longest injected wait (default 10ms when LatencyRate > 0).
	Latency time.Duration
	// DupRate: a Put or Delete that succeeded is sent to the inner store
	// once more, between half of Latency and Latency later, in the
	// background (a retransmitted request that arrives late).
	DupRate float64
	// ShortReadRate: a Get or GetRange returns a strict prefix of the data
	// together with an error wrapping ErrInjected and io.ErrUnexpectedEOF.
	ShortReadRate float64
	// KillAt kills the process before its KillAt-th mutating operation
	// (Put or Delete, counted from 1); 0 never kills.
	KillAt int
	// KillMidPut kills right after the KillAt-th mutating operation
	// returned from the inner store instead of before it: the object
	// landed, the process never learns it.
	KillMidPut bool
	// Kill replaces the default SIGKILL of the own process (for tests of
	// this package). It must not return normally for a real crash; if it
	// returns, the operation fails with ErrInjected.
	Kill func()
}

// Parse reads a specification such as
// "seed=1,error=0.05,ackloss=0.01,latency=0.05,latencyms=20,dup=0.01,short=0.05,killat=17,killmidput=1".
// Every key is optional; unknown keys and out-of-range values are errors.
func Parse(spec string) (Config, error) {
	var c Config
	for _, field := range strings.Split(spec, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			return Config{}, fmt.Errorf("%w: %q is not key=value", ErrBadSpec, field)
		}
		if err := c.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return Config{}, fmt.Errorf("%w: %s: %w", ErrBadSpec, field, err)
		}
	}
	return c, nil
}

func (c *Config) set(k, v string) error {
	var err error
	switch k {
	case "seed":
		c.Seed, err = strconv.ParseInt(v, 10, 64)
	case "error":
		c.ErrorRate, err = parseRate(v)
	case "ackloss":
		c.AckLossRate, err = parseRate(v)
	case "latency":
		c.LatencyRate, err = parseRate(v)
	case "dup":
		c.DupRate, err = parseRate(v)
	case "short":
		c.ShortReadRate, err = parseRate(v)
	case "latencyms":
		var ms int
		ms, err = strconv.Atoi(v)
		if err == nil && (ms < 0 || ms > 60_000) {
			err = errors.New("want 0 to 60000")
		}
		c.Latency = time.Duration(ms) * time.Millisecond
	case "killat":
		c.KillAt, err = strconv.Atoi(v)
		if err == nil && c.KillAt < 0 {
			err = errors.New("want a count from 0")
		}
	case "killmidput":
		c.KillMidPut, err = strconv.ParseBool(v)
	default:
		err = errors.New("unknown key")
	}
	return err
}

func parseRate(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, err
	}
	if !(f >= 0 && f <= 1) { // also rejects NaN
		return 0, errors.New("want a rate from 0 to 1")
	}
	return f, nil
}

// String formats c the way Parse reads it (Kill is not represented).
func (c Config) String() string {
	return fmt.Sprintf("seed=%d,error=%g,ackloss=%g,latency=%g,latencyms=%d,dup=%g,short=%g,killat=%d,killmidput=%t",
		c.Seed, c.ErrorRate, c.AckLossRate, c.LatencyRate, c.Latency.Milliseconds(), c.DupRate, c.ShortReadRate, c.KillAt, c.KillMidPut)
}
