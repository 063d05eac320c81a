package s3

import (
	"net/http"
	"sync"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// dateFresh is how recent the last Date header must be for Now to answer
// from it rather than send a request of its own.
const dateFresh = 10 * time.Second

// serverDate remembers the server's clock from the Date headers of its
// answers. Every answer's Date is the server's time at some moment before
// the answer arrived, so that Date plus our monotonic time since it
// arrived is a lower bound of the server's clock now: what Store.Now
// promises, without the round trip of a request made only to read it. The
// monotonic clock may stand still while the machine sleeps, which makes
// the bound lag, never lead.
type serverDate struct {
	mu   sync.Mutex
	ok   bool
	base time.Time     // the tightest bound: a Date minus our monotonic reading at its arrival
	seen time.Duration // monotonic reading at the latest answer's arrival
}

// observe records an answer's Date, arrived at monotonic reading mono.
func (d *serverDate) observe(date time.Time, mono time.Duration) {
	base := date.Add(-mono)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ok || base.After(d.base) {
		d.base = base
	}
	d.ok = true
	d.seen = max(d.seen, mono)
}

// now returns the lower bound of the server's clock at monotonic reading
// mono, and false when no answer arrived within dateFresh.
func (d *serverDate) now(mono time.Duration) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ok || mono-d.seen > dateFresh {
		return time.Time{}, false
	}
	return d.base.Add(mono), true
}

// headerDate returns the Date header of an answer, and whether it had a
// well-formed one.
func headerDate(resp *smithyhttp.Response) (time.Time, bool) {
	t, err := http.ParseTime(resp.Header.Get("Date"))
	return t, err == nil
}
