package fakecloud

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cloudstic/cloudstic/internal/source/cloud"
)

// graph serves /v1.0/ and the download URLs. Callers hold t.mu.
func (t *tenant) graph(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host + "/v1.0"
	p := strings.TrimPrefix(r.URL.Path, "/v1.0/")
	q := r.URL.Query()
	if id, ok := strings.CutPrefix(r.URL.Path, "/download/"); ok {
		it := t.items[id]
		if it == nil {
			writeErr(w, http.StatusNotFound, "itemNotFound", "no such item")
			return
		}
		t.serveContent(w, r, it.Data)
		return
	}
	switch p {
	case "me":
		writeJSON(w, map[string]any{"userPrincipalName": t.name + "@example.com"})
		return
	case "me/drive":
		writeJSON(w, map[string]any{"id": t.driveID(), "name": "OneDrive"})
		return
	case "me/drives":
		list := []any{map[string]any{"id": t.driveID(), "name": "OneDrive"}}
		for id, name := range t.drives {
			list = append(list, map[string]any{"id": id, "name": name})
		}
		writeJSON(w, map[string]any{"value": list})
		return
	}
	rest, ok := strings.CutPrefix(p, "drives/")
	if !ok {
		writeErr(w, http.StatusNotFound, "itemNotFound", "no such resource")
		return
	}
	drv, rest, _ := strings.Cut(rest, "/")
	rootID, own := t.driveRoot(drv)
	if rootID == "" {
		writeErr(w, http.StatusNotFound, "itemNotFound", "no such drive")
		return
	}
	switch {
	case rest == "root":
		writeJSON(w, t.graphItem(t.items[rootID], rootID))
	case strings.HasPrefix(rest, "root:"):
		it := t.byPath(rootID, strings.Trim(strings.TrimPrefix(rest, "root:"), ":/"))
		if it == nil {
			writeErr(w, http.StatusNotFound, "itemNotFound", "no such path")
			return
		}
		writeJSON(w, t.graphItem(it, rootID))
	case rest == "root/delta":
		t.graphDelta(w, q, base+"/drives/"+drv+"/root/delta", drv, rootID, own)
	case strings.HasPrefix(rest, "items/") && strings.HasSuffix(rest, "/children"):
		id := strings.TrimSuffix(strings.TrimPrefix(rest, "items/"), "/children")
		kids := t.sorted(func(it *Item) bool { return it.Parent == id && !it.Trashed })
		start, _ := strconv.Atoi(q.Get("skip")) // "" is 0
		out := map[string]any{}
		var vals []any
		for i := start; i < len(kids) && i < start+pageSize; i++ {
			vals = append(vals, t.graphItem(kids[i], rootID))
		}
		t.stats.ItemsListed += len(vals)
		if start+pageSize < len(kids) {
			out["@odata.nextLink"] = base + "/drives/" + drv + "/" + rest + "?skip=" + strconv.Itoa(start+pageSize)
		}
		out["value"] = vals
		writeJSON(w, out)
	case strings.HasPrefix(rest, "items/") && strings.HasSuffix(rest, "/content"):
		id := strings.TrimSuffix(strings.TrimPrefix(rest, "items/"), "/content")
		it := t.items[id]
		switch {
		case it == nil:
			writeErr(w, http.StatusNotFound, "itemNotFound", "no such item")
		case it.NoDownload:
			writeErr(w, http.StatusForbidden, "accessDenied", "you may not download this file")
		default:
			http.Redirect(w, r, "/download/"+url.PathEscape(id)+"?t="+url.QueryEscape(t.name), http.StatusFound)
		}
	default:
		writeErr(w, http.StatusNotFound, "itemNotFound", "no such resource")
	}
}

// driveRoot returns the root item id of a Graph drive id, and whether it
// is the tenant's own drive.
func (t *tenant) driveRoot(drv string) (string, bool) {
	if drv == t.driveID() {
		return t.rootID(), true
	}
	if _, ok := t.drives[drv]; ok {
		return drv, false
	}
	return "", false
}

// byPath finds the item at a slash path below root.
func (t *tenant) byPath(root, p string) *Item {
	cur := t.items[root]
	for _, part := range strings.Split(p, "/") {
		part, _ = url.PathUnescape(part)
		var next *Item
		for _, it := range t.items {
			if it.Parent == cur.ID && it.Name == part && !it.Trashed {
				next = it
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// graphItem is a driveItem resource.
func (t *tenant) graphItem(it *Item, rootID string) map[string]any {
	mt := it.MTime.Format(time.RFC3339Nano)
	d := map[string]any{"id": it.ID, "name": it.Name, "lastModifiedDateTime": mt,
		"fileSystemInfo": map[string]any{"lastModifiedDateTime": mt}}
	if it.ID == rootID {
		d["root"] = map[string]any{}
	} else {
		d["parentReference"] = map[string]any{"id": it.Parent}
	}
	if it.Dir {
		d["folder"] = map[string]any{"childCount": 0}
	} else {
		qx := cloud.NewQuickXor()
		qx.Write(it.Data)
		d["size"] = len(it.Data)
		d["file"] = map[string]any{"mimeType": "application/octet-stream",
			"hashes": map[string]any{"quickXorHash": base64.StdEncoding.EncodeToString(qx.Sum(nil))}}
	}
	return d
}

// graphDelta answers a delta query: without a token every item of the
// drive, with one the items changed since (deleted ones with the deleted
// facet); pages of pageSize, then a delta link holding the position the
// query began at.
func (t *tenant) graphDelta(w http.ResponseWriter, q url.Values, link, drv, rootID string, own bool) {
	snap := t.seq
	var ids []string
	inDrive := func(it *Item) bool {
		if own {
			return it.Drive == ""
		}
		return it.Drive == drv
	}
	if tok := q.Get("token"); tok != "" {
		seq, err := strconv.Atoi(tok)
		if err != nil || seq < t.minTok-1 || seq > t.seq {
			writeErr(w, http.StatusGone, "resyncRequired", "the delta token expired")
			return
		}
		for _, id := range t.changedSince(seq) {
			if it := t.items[id]; it == nil || inDrive(it) {
				ids = append(ids, id)
			}
		}
	} else {
		for _, it := range t.sorted(func(it *Item) bool { return inDrive(it) && !it.Trashed }) {
			ids = append(ids, it.ID)
		}
	}
	if s := q.Get("snap"); s != "" {
		snap, _ = strconv.Atoi(s) // ours
	}
	start, _ := strconv.Atoi(q.Get("skip")) // "" is 0
	var vals []any
	for i := start; i < len(ids) && i < start+pageSize; i++ {
		it := t.items[ids[i]]
		if it == nil || it.Trashed {
			vals = append(vals, map[string]any{"id": ids[i], "deleted": map[string]any{"state": "deleted"}})
			continue
		}
		vals = append(vals, t.graphItem(it, rootID))
	}
	out := map[string]any{"value": vals}
	if start+pageSize < len(ids) {
		v := url.Values{"skip": {strconv.Itoa(start + pageSize)}, "snap": {strconv.Itoa(snap)}}
		if tok := q.Get("token"); tok != "" {
			v.Set("token", tok)
		}
		out["@odata.nextLink"] = link + "?" + v.Encode()
	} else {
		out["@odata.deltaLink"] = link + "?token=" + strconv.Itoa(snap)
	}
	writeJSON(w, out)
}
