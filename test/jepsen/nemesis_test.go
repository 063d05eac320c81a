//go:build unix

package jepsen

import (
	"errors"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// nemesis starts a fault every 2 to 4 s, on a seeded schedule, each on a
// client that has none, and removes it after its hold time, until stop.
// The first three are the long ones, each longer than the TTL: a partition
// that heals after the lock expired, a lock holder stopped (SIGSTOP), and a
// stall: the client's requests reach the server 65 s late.
func (r *run) nemesis(proxies []*toxiproxy.Proxy, procs []*processSlot, stop chan struct{}) {
	rnd := mrand.New(mrand.NewPCG(r.seed, 0xfa17))
	busy := make([]bool, len(proxies))
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	short := []string{"latency", "bandwidth", "reset", "partition"}
	for n := 0; ; n++ {
		kind := []string{"long-partition", "sigstop", "stall"}[min(n, 2)]
		if n >= 3 {
			kind = short[rnd.IntN(len(short))]
		}
		hold := time.Duration(3+rnd.IntN(6)) * time.Second
		// The first free client from a random start.
		mu.Lock()
		i, free := rnd.IntN(len(proxies)), false
		for k := range len(busy) {
			if j := (i + k) % len(busy); !busy[j] {
				i, free = j, true
				break
			}
		}
		if free {
			busy[i] = true
		}
		mu.Unlock()
		if free {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.fault(kind, proxies[i], procs[i], hold, stop)
				mu.Lock()
				busy[i] = false
				mu.Unlock()
			}()
		}
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(2+rnd.IntN(3)) * time.Second):
		}
	}
}

// fault applies one fault to one client for hold (the long ones for longer
// than the lease), then removes it.
func (r *run) fault(kind string, proxy *toxiproxy.Proxy, slot *processSlot, hold time.Duration, stop chan struct{}) {
	var toxic string
	var err error
	switch kind {
	case "stall":
		// Requests sent now reach the server 65 s later: after the TTL, so
		// a write sent under a lease lands when others may hold the lock.
		hold = 70 * time.Second
		r.awaitHolder(slot, stop)
		toxic = "stall"
		err = addToxic(proxy, toxic, "latency", "upstream", 1, toxiproxy.Attributes{"latency": 65000})
	case "long-partition":
		hold = 65 * time.Second // past the 60 s TTL: heals after the lease and the lock expired
		r.awaitHolder(slot, stop)
		toxic = "cut"
		err = addToxic(proxy, toxic, "timeout", "", 1, toxiproxy.Attributes{"timeout": 0})
	case "partition":
		toxic = "cut"
		err = addToxic(proxy, toxic, "timeout", "", 1, toxiproxy.Attributes{"timeout": 0})
	case "latency":
		toxic = "slow"
		err = addToxic(proxy, toxic, "latency", "", 1, toxiproxy.Attributes{"latency": 2000 + mrand.IntN(5000), "jitter": 500})
	case "bandwidth":
		toxic = "thin"
		err = addToxic(proxy, toxic, "bandwidth", "", 1, toxiproxy.Attributes{"rate": 32})
	case "reset":
		toxic = "reset"
		err = addToxic(proxy, toxic, "reset_peer", "", 0.5, toxiproxy.Attributes{"timeout": 100 + mrand.IntN(500)})
	case "sigstop":
		hold = 65 * time.Second // longer than the 60 s TTL: a long GC pause
		r.awaitHolder(slot, stop)
		slot.mu.Lock()
		if c := slot.cmd; c != nil && c.Process != nil {
			err = c.Process.Signal(syscall.SIGSTOP)
		} else {
			kind = "sigstop (no process was running)"
		}
		slot.mu.Unlock()
	}
	if err != nil {
		r.t.Errorf("nemesis %s: %v", kind, err)
	}
	r.mu.Lock()
	r.faults[kind]++
	r.mu.Unlock()
	select {
	case <-stop:
	case <-time.After(hold):
	}
	if toxic != "" {
		// The API answers slowly under load; a reset request is retried.
		var err error
		for range 5 {
			if err = proxy.RemoveToxic(toxic); err == nil {
				break
			}
			<-time.After(300 * time.Millisecond)
		}
		if err != nil {
			r.t.Errorf("nemesis: removing %s: %v", toxic, err)
		}
	}
	// A process stopped meanwhile (or long ago, by an earlier sigstop that
	// ended early) is always continued.
	slot.mu.Lock()
	if c := slot.cmd; c != nil && c.Process != nil {
		_ = c.Process.Signal(syscall.SIGCONT) // it may have ended meanwhile
	}
	slot.mu.Unlock()
}

// awaitHolder waits (up to 30 s) until the client's current process holds
// a lock, by the history, so that a long fault hits a lock holder at work.
func (r *run) awaitHolder(slot *processSlot, stop chan struct{}) {
	for range 300 {
		slot.mu.Lock()
		pid := 0
		if slot.cmd != nil && slot.cmd.Process != nil {
			pid = slot.cmd.Process.Pid
		}
		slot.mu.Unlock()
		if pid != 0 && r.holds(pid) {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// holds reports whether process pid holds a lock by the history so far.
func (r *run) holds(pid int) bool {
	f, err := os.Open(r.history)
	if err != nil {
		return false
	}
	defer f.Close() //nolint:errcheck // read-only
	events, err := Read(f)
	if err != nil {
		return false // a line being written: look again
	}
	held := false
	suffix := "/" + strconv.Itoa(pid)
	for _, e := range events {
		if strings.HasSuffix(e.Proc, suffix) {
			switch e.Event {
			case Acquired:
				held = true
			case Released, Lost, Exit:
				held = false
			}
		}
	}
	return held
}

// addToxic adds a toxic to proxy. toxiproxy's API server closes idle
// keep-alive connections (after its 10 s read timeout), and a POST sent on
// one as it closes fails with "connection reset by peer": Go retries only
// idempotent requests. So a request that failed on the connection is
// retried, after checking the toxic is not there already (the request may
// have landed before the connection broke).
func addToxic(proxy *toxiproxy.Proxy, name, typeName, stream string, toxicity float32, attrs toxiproxy.Attributes) error {
	var err error
	for range 5 {
		_, err = proxy.AddToxic(name, typeName, stream, toxicity, attrs)
		var transport *url.Error
		if err == nil || !errors.As(err, &transport) {
			return err // added, or refused by the API
		}
		<-time.After(300 * time.Millisecond)
		toxics, lerr := proxy.Toxics()
		if lerr != nil {
			continue
		}
		for _, tx := range toxics {
			if tx.Name == name {
				return nil
			}
		}
	}
	return err
}
