package fakecloud

import (
	"crypto/md5"  //nolint:gosec // what Drive reports
	"crypto/sha1" //nolint:gosec // what Graph reports
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Item is a file, folder or shortcut of a tenant's drive, as the admin
// API creates it.
type Item struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Parent string `json:"parent"`
	// Dir: a folder. MIME: a Google type (documents, shortcuts).
	Dir    bool   `json:"dir,omitempty"`
	MIME   string `json:"mime,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Target string `json:"target,omitempty"`
	// Drive is a shared drive's id; empty for the tenant's own drive.
	Drive   string    `json:"drive,omitempty"`
	MTime   time.Time `json:"mtime"`
	Trashed bool      `json:"trashed,omitempty"`
	// NoDownload makes downloads answer 403 (no permission, or a file
	// flagged as abusive).
	NoDownload bool `json:"no_download,omitempty"`
}

// Fault is an injected failure: the next Count requests whose path and
// query ("PATH?QUERY") hold Path get Status (with Retry-After and a Drive error reason), or, with
// CutAfter, a body cut after that many bytes.
type Fault struct {
	Path       string `json:"path"`
	Status     int    `json:"status,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
	Reason     string `json:"reason,omitempty"`
	CutAfter   int    `json:"cut_after,omitempty"`
	Count      int    `json:"count"`
}

// Stats counts what a tenant was served.
type Stats struct {
	Requests    int            `json:"requests"`
	Downloads   int            `json:"downloads"`
	BytesServed int64          `json:"bytes_served"`
	ByPath      map[string]int `json:"by_path"`
	// ItemsListed counts the items listings served (Drive files.list,
	// Graph children): a full scan lists every item, a lookup by name one.
	ItemsListed   int `json:"items_listed"`
	TokenRefresh  int `json:"token_refresh"`
	FaultsApplied int `json:"faults_applied"`
}

// tenant is one account: its drive, shared drives, tokens and log.
type tenant struct {
	name   string
	mu     sync.Mutex
	items  map[string]*Item
	drives map[string]string // shared drive id -> name
	seq    int               // the change log's position
	log    []change
	minTok int // tokens below are expired
	access string
	faults []Fault
	stats  Stats
	next   int
	codes  map[string]string // authorization code -> PKCE challenge
}

type change struct {
	seq int
	id  string
}

// rootID is the id of the tenant's own drive's root folder.
func (t *tenant) rootID() string { return "root-" + t.name }

// driveID is the Graph id of the tenant's own drive.
func (t *tenant) driveID() string { return "drive-" + t.name }

func newTenant(name string) *tenant {
	t := &tenant{name: name, items: map[string]*Item{}, drives: map[string]string{}, codes: map[string]string{}}
	t.items[t.rootID()] = &Item{ID: t.rootID(), Name: "My Drive", Dir: true, MTime: time.Unix(1700000000, 0).UTC()}
	t.access = t.newToken()
	return t
}

// newToken returns a fresh access token of the tenant.
func (t *tenant) newToken() string {
	t.next++
	return fmt.Sprintf("at-%s-%d", t.name, t.next)
}

// put creates or replaces an item and logs the change. Callers hold mu.
func (t *tenant) put(it Item) *Item {
	if it.ID == "" {
		t.next++
		it.ID = fmt.Sprintf("%s-i%d", t.name, t.next)
	}
	if it.MTime.IsZero() {
		it.MTime = time.Unix(1700000000+int64(t.seq)+1, 0).UTC()
	}
	c := it
	t.items[it.ID] = &c
	t.logChange(it.ID)
	return &c
}

func (t *tenant) logChange(id string) {
	t.seq++
	t.log = append(t.log, change{t.seq, id})
}

// changedSince returns the ids changed after seq, each once, in the order
// of their last change.
func (t *tenant) changedSince(seq int) []string {
	last := map[string]int{}
	for _, c := range t.log {
		if c.seq > seq {
			last[c.id] = c.seq
		}
	}
	ids := make([]string, 0, len(last))
	for id := range last {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return last[ids[i]] < last[ids[j]] })
	return ids
}

// sorted returns the items matching keep, by id.
func (t *tenant) sorted(keep func(*Item) bool) []*Item {
	var out []*Item
	for _, it := range t.items {
		if keep(it) {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// fault returns the first fault for path, counting it down.
func (t *tenant) fault(path string) (Fault, bool) {
	for i := range t.faults {
		f := &t.faults[i]
		if f.Count > 0 && strings.Contains(path, f.Path) {
			f.Count--
			t.stats.FaultsApplied++
			return *f, true
		}
	}
	return Fault{}, false
}

func sumHex(kind string, data []byte) string {
	switch kind {
	case "md5":
		s := md5.Sum(data) //nolint:gosec // see import
		return hex.EncodeToString(s[:])
	case "sha1":
		s := sha1.Sum(data) //nolint:gosec // see import
		return strings.ToUpper(hex.EncodeToString(s[:]))
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
