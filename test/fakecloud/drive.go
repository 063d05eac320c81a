package fakecloud

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	folderMIME = "application/vnd.google-apps.folder"
	pageSize   = 3 // small, so that every listing of a test pages
)

// drive serves /drive/v3/. Callers hold t.mu.
func (t *tenant) drive(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := strings.TrimPrefix(r.URL.Path, "/drive/v3/")
	var out map[string]any
	switch {
	case p == "about":
		out = map[string]any{"user": map[string]any{"emailAddress": t.name + "@example.com", "displayName": t.name}}
	case p == "drives":
		out = t.driveDrives(q.Get("q"))
	case p == "files":
		out = t.driveList(w, q)
		if out == nil {
			return
		}
	case p == "changes/startPageToken":
		out = map[string]any{"startPageToken": strconv.Itoa(t.seq)}
	case p == "changes":
		out = t.driveChanges(w, q)
		if out == nil {
			return
		}
	case strings.HasSuffix(p, "/export"):
		it := t.file(strings.TrimSuffix(strings.TrimPrefix(p, "files/"), "/export"))
		if it == nil || !strings.HasPrefix(it.MIME, "application/vnd.google-apps.") {
			writeErr(w, http.StatusNotFound, "notFound", "no such document")
			return
		}
		t.serveContent(w, &http.Request{Header: http.Header{}}, it.Data) // exports ignore Range
		return
	case strings.HasPrefix(p, "files/"):
		id := strings.TrimPrefix(p, "files/")
		if id == "root" {
			id = t.rootID()
		}
		it := t.file(id)
		if it == nil {
			writeErr(w, http.StatusNotFound, "notFound", "file not found: "+id)
			return
		}
		if q.Get("alt") == "media" {
			if it.NoDownload {
				writeErr(w, http.StatusForbidden, "cannotDownloadAbusiveFile", "this file cannot be downloaded")
				return
			}
			t.serveContent(w, r, it.Data)
			return
		}
		out = t.driveFile(it)
	default:
		writeErr(w, http.StatusNotFound, "notFound", "no such method")
		return
	}
	writeJSON(w, filterFields(out, q.Get("fields")))
}

// file returns a live item, or nil.
func (t *tenant) file(id string) *Item {
	if it := t.items[id]; it != nil {
		return it
	}
	return nil
}

func (t *tenant) driveDrives(q string) map[string]any {
	want := ""
	if lit := literals(q); len(lit) > 0 {
		want = lit[0]
	}
	var list []any
	for id, name := range t.drives {
		if want == "" || name == want {
			list = append(list, map[string]any{"id": id, "name": name})
		}
	}
	return map[string]any{"drives": list}
}

// driveFile is a Drive file resource.
func (t *tenant) driveFile(it *Item) map[string]any {
	f := map[string]any{"id": it.ID, "name": it.Name, "modifiedTime": it.MTime.Format(time.RFC3339Nano),
		"trashed": it.Trashed, "mimeType": "application/octet-stream"}
	if it.Parent != "" {
		f["parents"] = []any{it.Parent}
	}
	switch {
	case it.Dir:
		f["mimeType"] = folderMIME
	case it.MIME != "":
		f["mimeType"] = it.MIME
		if it.Target != "" {
			f["shortcutDetails"] = map[string]any{"targetId": it.Target}
		}
	default:
		f["size"] = strconv.Itoa(len(it.Data))
		f["md5Checksum"] = sumHex("md5", it.Data)
		f["sha256Checksum"] = sumHex("sha256", it.Data)
	}
	return f
}

// driveList answers files.list for the queries the source makes.
func (t *tenant) driveList(w http.ResponseWriter, q map[string][]string) map[string]any {
	query := first(q, "q")
	lits := literals(query)
	var parent, name string
	switch {
	case strings.Contains(query, "in parents") && strings.Contains(query, "name ="):
		parent, name = lits[0], lits[1]
	case strings.Contains(query, "in parents"):
		parent = lits[0]
	}
	wantDrive := ""
	if first(q, "corpora") == "drive" {
		wantDrive = first(q, "driveId")
	}
	items := t.sorted(func(it *Item) bool {
		return it.ID != t.rootID() && it.Drive == wantDrive && (parent == "" || it.Parent == parent) &&
			(name == "" || it.Name == name) && (!strings.Contains(query, "trashed = false") || !it.Trashed) &&
			(!strings.Contains(query, "mimeType = '"+folderMIME+"'") || it.Dir) && it.ID != wantDrive
	})
	start, err := pageStart(first(q, "pageToken"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid", "bad pageToken")
		return nil
	}
	out := map[string]any{}
	var files []any
	for i := start; i < len(items) && i < start+pageSize; i++ {
		files = append(files, t.driveFile(items[i]))
	}
	t.stats.ItemsListed += len(files)
	if start+pageSize < len(items) {
		out["nextPageToken"] = strconv.Itoa(start + pageSize)
	}
	out["files"] = files
	return out
}

// driveChanges answers changes.list: a page token is a position of the
// change log ("seq") or, within a page, "seq:offset".
func (t *tenant) driveChanges(w http.ResponseWriter, q map[string][]string) map[string]any {
	tok := first(q, "pageToken")
	seqStr, offStr, _ := strings.Cut(tok, ":")
	seq, err := strconv.Atoi(seqStr)
	if err != nil || seq < t.minTok-1 || seq > t.seq {
		writeErr(w, http.StatusGone, "invalid", "page token expired")
		return nil
	}
	off, _ := strconv.Atoi(offStr) // "" is 0
	wantDrive := first(q, "driveId")
	var ids []string
	for _, id := range t.changedSince(seq) {
		if it := t.items[id]; it == nil || it.Drive == wantDrive {
			ids = append(ids, id)
		}
	}
	var changes []any
	for i := off; i < len(ids) && i < off+pageSize; i++ {
		c := map[string]any{"fileId": ids[i], "removed": t.items[ids[i]] == nil}
		if it := t.items[ids[i]]; it != nil {
			c["file"] = t.driveFile(it)
		}
		changes = append(changes, c)
	}
	out := map[string]any{"changes": changes}
	if off+pageSize < len(ids) {
		out["nextPageToken"] = seqStr + ":" + strconv.Itoa(off+pageSize)
	} else {
		out["newStartPageToken"] = strconv.Itoa(t.seq)
	}
	return out
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func pageStart(tok string) (int, error) {
	if tok == "" {
		return 0, nil
	}
	return strconv.Atoi(tok)
}

// literals returns the quoted strings of a Drive query, unescaped.
func literals(q string) []string {
	var out []string
	for i := 0; i < len(q); i++ {
		if q[i] != '\'' {
			continue
		}
		var b strings.Builder
		for i++; i < len(q) && q[i] != '\''; i++ {
			if q[i] == '\\' && i+1 < len(q) {
				i++
			}
			b.WriteByte(q[i])
		}
		out = append(out, b.String())
	}
	return out
}

// filterFields keeps the fields a Drive "fields" parameter names:
// "a,b(c,d),e/f" (nested selections in parentheses or after "/"); ""
// keeps everything.
func filterFields(v map[string]any, fields string) map[string]any {
	if fields == "" || fields == "*" {
		return v
	}
	return applySel(v, parseSel(fields)).(map[string]any)
}

type sel map[string]sel // nil: the whole value

func parseSel(s string) sel {
	out := sel{}
	for len(s) > 0 {
		i := strings.IndexAny(s, ",(/")
		if i < 0 {
			out[strings.TrimSpace(s)] = nil
			break
		}
		name := strings.TrimSpace(s[:i])
		switch s[i] {
		case ',':
			out[name] = nil
			s = s[i+1:]
		case '/':
			rest := s[i+1:]
			j := strings.IndexByte(rest, ',')
			if j < 0 {
				j = len(rest)
			}
			out[name] = merge(out[name], parseSel(rest[:j]))
			s = strings.TrimPrefix(rest[j:], ",")
		case '(':
			depth, j := 1, i+1
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			out[name] = merge(out[name], parseSel(s[i+1:j-1]))
			s = strings.TrimPrefix(s[j:], ",")
		}
	}
	return out
}

func merge(a, b sel) sel {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

func applySel(v any, s sel) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range s {
			if val, ok := x[k]; ok {
				out[k] = applySel(val, sub)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = applySel(x[i], s)
		}
		return out
	}
	return v
}
